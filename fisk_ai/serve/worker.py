"""A `fisk serve` worker: the agent of one configuration behind every endpoint it enables,
until interrupted. `fisk serve` is flags and this; an embedder hosts an agent the same way
without argparse.

The provider is built first, so a missing key fails the process at once; then the application
is introspected, the agent's NATS connection made, the agent's resources composed once
(``compose_agent``) and every channel that runs the agent opened on one Server over them; the
tool server comes last, and the banner is announced once everything it lists is listening.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fisk_ai.agent.resources import ProviderOptions
from fisk_ai.serve.banner import (
    Started,
    answers_a2a_http,
    answers_prompts,
    answers_slack,
    banner,
    reaches_nats,
    runs_agent,
    takes_jobs,
)

if TYPE_CHECKING:
    from pathlib import Path

    from fisk_ai.a2a.nats import NatsTransport
    from fisk_ai.agent.application import ApplicationTools
    from fisk_ai.agent.resources import Resources
    from fisk_ai.config import Config
    from fisk_ai.serve.jobs.channel import JobsChannel
    from fisk_ai.serve.prompts.intake import PromptsChannel
    from fisk_ai.serve.server import Channel, HostedChannels
    from fisk_ai.serve.tools import ServedSelection, ToolsServer

__all__ = ["ServeOptions", "serve_agent", "served_selection"]


@dataclass(frozen=True)
class ServeOptions:
    """What the operator asked of a worker besides its configuration: how to reach the model,
    the file session directory, the directory command tools run in, the jobs' worker count
    overriding expose.agent.jobs.workers, and telemetry switched off."""

    provider: ProviderOptions = dataclasses.field(default_factory=ProviderOptions)
    state_dir: str | None = None
    work_dir: Path | None = None
    workers: int | None = None
    no_telemetry: bool = False


@dataclass(frozen=True)
class _Channels:
    prompts: PromptsChannel | None
    jobs: JobsChannel | None
    hosted: HostedChannels


async def serve_agent(
    cfg: Config,
    options: ServeOptions,
    *,
    warn: Callable[[str], None],
    note: Callable[[str], None],
    announce: Callable[[str], None],
) -> int:
    """Serve the agent of ``cfg`` until interrupted; the exit status. ``announce`` gets the
    banner once every endpoint it lists is listening, ``warn`` each startup warning and
    ``note`` the process's other sentences (why telemetry is off, what it delivered)."""
    from fisk_ai.agent.application import load_application_tools
    from fisk_ai.agent.resources import build_provider
    from fisk_ai.serve.connection import connect_transport
    from fisk_ai.serve.draining import (
        CHANNEL_DRAINING_LINE,
        DRAINING_LINE,
        ServedEndpoints,
        serve_until_stopped,
    )

    provider = build_provider(cfg, options.provider) if runs_agent(cfg) else None
    try:
        application_tools = await load_application_tools(cfg)
        for warning in application_tools.warnings:
            warn(warning)
        application = application_tools.application
        version = (application.version if application is not None else "") or "dev"
        transport = (
            await connect_transport(
                cfg.nats_context,
                name=f"fisk-ai {cfg.identity}",
                fix="nats_context",
                warn_unauthenticated=warn,
            )
            if reaches_nats(cfg)
            else None
        )
        try:
            async with contextlib.AsyncExitStack() as started:
                resources: Resources | None = None
                channels: _Channels | None = None
                if provider is not None:
                    from fisk_ai.serve.composition import Composition, compose_agent

                    resources = await started.enter_async_context(
                        compose_agent(
                            cfg,
                            Composition(
                                state_dir=options.state_dir,
                                work_dir=options.work_dir,
                                interactive=True,
                                no_telemetry=options.no_telemetry,
                            ),
                            provider=provider,
                            application_tools=application_tools,
                            warn=warn,
                            note=note,
                            delivered=lambda delivery: note(f"telemetry: {delivery.summary()}"),
                        )
                    )
                    channels = await _open_channels(
                        cfg, started, transport, resources, application_tools, options
                    )
                telemetry = resources.telemetry if resources is not None else None
                prompts = channels.prompts if channels is not None else None
                tools = await _start_tools(
                    cfg, transport, application_tools, version, options, prompts, resources
                )
                if transport is not None:
                    await _require_subscriptions(cfg, transport)
                a2a_http = None
                if resources is not None and transport is not None and answers_a2a_http(cfg):
                    from fisk_ai.serve.a2a_http.hosting import serve_a2a_http

                    a2a_http = await started.enter_async_context(
                        serve_a2a_http(
                            cfg,
                            transport,
                            resources,
                            version=version,
                            application=application.name if application is not None else "",
                            warn=warn,
                        )
                    )
                printed = banner(
                    cfg,
                    Started(
                        version,
                        prompts=prompts,
                        tools=tools,
                        jobs=(
                            (channels.jobs, options.workers is not None)
                            if channels is not None and channels.jobs is not None
                            else None
                        ),
                        telemetry=telemetry is not None and telemetry.enabled,
                        work_dir=options.work_dir,
                        a2a_http=a2a_http,
                    ),
                )
                hosted = channels.hosted if channels is not None else None
                return await serve_until_stopped(
                    ServedEndpoints(
                        cfg.identity,
                        prompts=hosted,
                        tools=tools[0] if tools is not None else None,
                    ),
                    transport,
                    draining_line=CHANNEL_DRAINING_LINE if hosted is not None else DRAINING_LINE,
                    announce=lambda: announce(printed),
                    serving=hosted.serving if hosted is not None else None,
                )
        finally:
            if transport is not None:
                await transport.close()
    finally:
        if provider is not None:
            await provider.aclose()


async def _open_channels(
    cfg: Config,
    started: contextlib.AsyncExitStack,
    transport: NatsTransport | None,
    resources: Resources,
    application_tools: ApplicationTools,
    options: ServeOptions,
) -> _Channels:
    """Every channel that runs the agent, on one Server over ``resources``; closed (abandoning
    what still runs) when ``started`` unwinds."""
    from fisk_ai.serve.jobs.hosting import take_jobs
    from fisk_ai.serve.prompts.hosting import prompts_channel
    from fisk_ai.serve.server import HostedChannels

    channels: list[tuple[Channel, int]] = []
    jobs: JobsChannel | None = None
    if takes_jobs(cfg):
        jobs = await started.enter_async_context(take_jobs(cfg, resources, workers=options.workers))
        channels.append((jobs, jobs.options.workers))
    prompts: PromptsChannel | None = None
    if transport is not None and answers_prompts(cfg):
        prompts = prompts_channel(cfg, transport, resources, gates=len(application_tools.gates))
        await prompts.open()
        channels.append((prompts, prompts.options.workers))
    if answers_slack(cfg):
        from fisk_ai.serve.slack.hosting import take_slack

        slack = await started.enter_async_context(take_slack(cfg, resources))
        channels.append((slack, slack.options.workers))
    hosted = HostedChannels(cfg.identity, resources, channels)
    hosted.start()
    started.push_async_callback(hosted.close)
    return _Channels(prompts, jobs, hosted)


async def _start_tools(
    cfg: Config,
    transport: NatsTransport | None,
    application_tools: ApplicationTools,
    version: str,
    options: ServeOptions,
    prompts: PromptsChannel | None,
    resources: Resources | None,
) -> tuple[ToolsServer, ServedSelection] | None:
    """The tool server with what it serves, when ``cfg`` serves tools or answers prompts (an
    agent answering prompts answers discovery too, serving tools or not)."""
    from fisk_ai.serve.tools import ServedSelection, ToolsOptions, ToolsServer
    from fisk_ai.telemetry import DISABLED

    a2a = cfg.expose.agent.a2a
    if transport is None or a2a is None or not (a2a.serve_tools or prompts is not None):
        return None
    selection = served_selection(cfg, application_tools) if a2a.serve_tools else None
    telemetry = resources.telemetry if resources is not None else None
    server = ToolsServer(
        transport,
        selection.exposed if selection is not None else (),
        ToolsOptions(
            identity=cfg.identity,
            version=version,
            max_concurrent=a2a.max_concurrent_tools,
            tool_timeout=a2a.tool_timeout,
            work_dir=options.work_dir,
            model=cfg.llm.model if prompts is not None else "",
            # The card says what the started handle does, not what the file asks for.
            telemetry=telemetry is not None and telemetry.enabled,
            telemetry_content=telemetry is not None and telemetry.content_exported,
            calls=selection is not None,
        ),
        telemetry=telemetry if telemetry is not None else DISABLED,
    )
    await server.start()
    return server, selection if selection is not None else ServedSelection(exposed=())


async def _require_subscriptions(cfg: Config, transport: NatsTransport) -> None:
    """Refuse to announce endpoints the NATS server would not let this worker subscribe to.

    The server answers a subscription its permissions deny with an -ERR and keeps the
    connection; nats-py only records it as the connection's last error. Every endpoint has
    subscribed by now, and a round trip behind those subscriptions has been answered once the
    flush returns, so any refusal among them has arrived."""
    from fisk_ai.errors import FiskError

    client = transport.client
    await client.flush()
    error = client.last_error
    if error is not None and "permissions violation for subscription" in str(error).lower():
        raise FiskError(
            f"the NATS server refused agent {cfg.identity} a subscription ({error}); grant the "
            f"user of NATS context {cfg.nats_context or '(selected)'} subscribe permission on "
            "the agent's subjects (docs/serving.md, NATS permissions) and start fisk serve again"
        )


def served_selection(cfg: Config, application_tools: ApplicationTools) -> ServedSelection:
    """What the a2a tool endpoint serves of ``cfg``: the application's commands narrowed by
    expose.agent.tools, less the gated ones. Only commands declare a2a exposure; the built-in
    tools the configuration enables are listed as withheld by name, without opening the stores
    they would work on, so serving tools never needs a memory bucket or an index."""
    from fisk_ai.agent.application import tool_filter
    from fisk_ai.serve.tools import select_served_tools

    application = application_tools.application
    exposed = cfg.expose.agent.tools
    selection = select_served_tools(
        application.tools if application is not None else (),
        include=tool_filter(exposed.include),
        exclude=tool_filter(exposed.exclude),
        confirm_tags=cfg.harness.confirm_tags,
    )
    return dataclasses.replace(
        selection, withheld=(*selection.withheld, *_enabled_builtin_names(cfg))
    )


def _enabled_builtin_names(cfg: Config) -> tuple[str, ...]:
    """The built-in tools a run of ``cfg`` offers, in the order a run's tool set has them."""
    from fisk_ai.tools.builtin.hitl import HITL_TOOL_NAMES
    from fisk_ai.tools.builtin.knowledge import KNOWLEDGE_TOOL_NAMES
    from fisk_ai.tools.builtin.memory import MEMORY_LIST, MEMORY_READ, MEMORY_TOOL_NAMES

    harness = cfg.harness
    names: list[str] = []
    if harness.human_in_the_loop.enabled:
        names += HITL_TOOL_NAMES
    if harness.memory.enabled:
        names += (MEMORY_LIST, MEMORY_READ) if harness.memory.read_only else MEMORY_TOOL_NAMES
    if harness.knowledge.enabled:
        names += KNOWLEDGE_TOOL_NAMES
    return tuple(names)
