"""`fisk serve`: host the agent behind the endpoints its configuration enables, until interrupted.

This build answers prompts and serves tools over a2a, both on one connection, takes queued
jobs off a Choria asyncjobs work queue, and answers mentions in Slack threads; the prompts, jobs
and Slack channels run on one Server sharing the provider and stores.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fisk_ai.cli.flags import add_common_flags, add_no_telemetry_flag, log_to_stderr

if TYPE_CHECKING:
    from pathlib import Path

    from fisk_ai.a2a.transport import Transport
    from fisk_ai.agent.application import ApplicationTools
    from fisk_ai.agent.resources import ProviderOptions
    from fisk_ai.config import Config, SlackExposure
    from fisk_ai.llm.types import Provider
    from fisk_ai.serve.jobs.channel import JobsChannel
    from fisk_ai.serve.prompts.intake import PromptsChannel
    from fisk_ai.serve.server import Channel, HostedChannels
    from fisk_ai.serve.tools import ServedSelection, ToolsServer
    from fisk_ai.telemetry import Telemetry

DEFAULT_CONFIG = "agent.yaml"
PROMPTS_TOOL_NOTE = (
    "Answering a prompt runs the agent loop and reaches every tool the top-level include and "
    "exclude selected."
)


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "serve",
        help="serve the agent to other agents until interrupted",
        description="Host the agent behind the endpoints agent.yaml enables (in this build: "
        "answering prompts over a2a, expose.agent.a2a.prompts, its tools over a2a, "
        "expose.agent.a2a.serve_tools, queued jobs, expose.agent.jobs, and mentions in "
        "Slack, expose.agent.slack). The first "
        "interrupt drains, the second stops at once.",
    )
    parser.add_argument(
        "--config", default=DEFAULT_CONFIG, help="the agent configuration (default: agent.yaml)"
    )
    parser.add_argument(
        "--work-dir",
        metavar="DIR",
        help="the directory command tools run in (absolute, existing; default: this one)",
    )
    parser.add_argument("--state-dir", metavar="DIR", help="the file session backend's directory")
    parser.add_argument("--api-key", help="the Anthropic API key (env ANTHROPIC_API_KEY)")
    parser.add_argument(
        "--base-url", help="an Anthropic-compatible endpoint (env ANTHROPIC_BASE_URL)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="queued jobs run at once, overriding expose.agent.jobs.workers",
    )
    add_no_telemetry_flag(parser)
    add_common_flags(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from fisk_ai.config import Mode, load, require_something_to_serve

    log_to_stderr(verbose=bool(args.verbose))
    cfg = load(args.config, Mode.SERVE)
    require_something_to_serve(cfg)
    if answers_slack(cfg):
        from fisk_ai.serve.slack.hosting import slack_tokens

        slack_tokens(os.environ)
    work_dir = checked_work_dir(args.work_dir)
    return asyncio.run(
        _serve(
            cfg,
            work_dir,
            provider_options(args),
            args.state_dir,
            workers=args.workers,
            no_telemetry=args.no_telemetry,
        )
    )


def provider_options(args: argparse.Namespace) -> ProviderOptions:
    from fisk_ai.agent.resources import ProviderOptions

    return ProviderOptions(
        api_key=args.api_key or os.environ.get("ANTHROPIC_API_KEY", ""),
        base_url=args.base_url or os.environ.get("ANTHROPIC_BASE_URL", ""),
    )


def answers_prompts(cfg: Config) -> bool:
    a2a = cfg.expose.agent.a2a
    return a2a is not None and a2a.prompts is not None


def takes_jobs(cfg: Config) -> bool:
    return cfg.expose.agent.jobs is not None


def answers_slack(cfg: Config) -> bool:
    return cfg.expose.agent.slack is not None


def runs_agent(cfg: Config) -> bool:
    """Whether a channel of ``cfg`` runs the agent loop, and so needs the provider."""
    return answers_prompts(cfg) or takes_jobs(cfg) or answers_slack(cfg)


def serves_tools(cfg: Config) -> bool:
    a2a = cfg.expose.agent.a2a
    return a2a is not None and a2a.serve_tools


def reaches_nats(cfg: Config) -> bool:
    """Whether something `fisk serve` runs for ``cfg`` reaches NATS: the a2a endpoints, the
    queue, remote_tools, or a JetStream session or memory store. Only then does the process
    connect to the agent's NATS context, so a Slack bot keeping its sessions in files needs
    none."""
    from fisk_ai.config import StoreBackend

    harness = cfg.harness
    return (
        answers_prompts(cfg)
        or serves_tools(cfg)
        or takes_jobs(cfg)
        or bool(cfg.remote_tools)
        or harness.sessions.backend is StoreBackend.JETSTREAM
        or (harness.memory.enabled and harness.memory.backend is StoreBackend.JETSTREAM)
    )


def checked_work_dir(value: str | None) -> Path | None:
    from pathlib import Path

    from fisk_ai.errors import FiskError

    if not value:
        return None
    path = Path(value)
    if not path.is_absolute():
        raise FiskError(f"--work-dir {value} is not an absolute path; name the directory in full")
    if not path.is_dir():
        raise FiskError(f"--work-dir {value} is not an existing directory; create it first")
    return path


async def _serve(
    cfg: Config,
    work_dir: Path | None,
    provider_options: ProviderOptions,
    state_dir: str | None,
    *,
    workers: int | None = None,
    no_telemetry: bool = False,
) -> int:
    from fisk_ai.agent.application import load_application_tools, run_tool_set, tool_filter
    from fisk_ai.agent.resources import build_provider
    from fisk_ai.serve.connection import connect_transport
    from fisk_ai.serve.draining import (
        CHANNEL_DRAINING_LINE,
        DRAINING_LINE,
        ServedEndpoints,
        serve_until_stopped,
    )
    from fisk_ai.serve.tools import ToolsOptions, ToolsServer, select_served_tools
    from fisk_ai.util.sanitize import single_line

    def warn(text: str) -> None:
        print(f"warning: {single_line(text)}", file=sys.stderr)

    a2a = cfg.expose.agent.a2a
    # Built before anything connects, so a missing key fails the process at once.
    provider = build_provider(cfg, provider_options) if runs_agent(cfg) else None
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
                prompts, jobs, hosted, telemetry = await _host_channels(
                    cfg,
                    started,
                    transport,
                    provider,
                    application_tools,
                    _HostPlaces(state_dir, work_dir, workers, warn, no_telemetry),
                )
                tools: ToolsServer | None = None
                selection: ServedSelection | None = None
                if (
                    transport is not None
                    and a2a is not None
                    and (a2a.serve_tools or prompts is not None)
                ):
                    if a2a.serve_tools:
                        exposed = cfg.expose.agent.tools
                        selection = select_served_tools(
                            run_tool_set(cfg, application_tools),
                            include=tool_filter(exposed.include),
                            exclude=tool_filter(exposed.exclude),
                            confirm_tags=cfg.harness.confirm_tags,
                        )
                    # An agent answering prompts answers discovery too, serving tools or not;
                    # the card's telemetry fields are what the started handle does.
                    tools = ToolsServer(
                        transport,
                        selection.exposed if selection is not None else (),
                        ToolsOptions(
                            identity=cfg.identity,
                            version=version,
                            max_concurrent=a2a.max_concurrent_tools,
                            tool_timeout=a2a.tool_timeout,
                            work_dir=work_dir,
                            model=cfg.llm.model if prompts is not None else "",
                            telemetry=telemetry is not None and telemetry.enabled,
                            telemetry_content=telemetry is not None and telemetry.content_exported,
                            calls=selection is not None,
                        ),
                    )
                    await tools.start()
                printed = banner(
                    cfg,
                    version,
                    prompts=prompts,
                    tools=(tools, selection) if tools is not None and selection else None,
                    work_dir=work_dir,
                    jobs=(jobs, workers is not None) if jobs is not None else None,
                    telemetry=telemetry is not None and telemetry.enabled,
                )

                def announce() -> None:
                    sys.stdout.write(printed)
                    sys.stdout.flush()

                return await serve_until_stopped(
                    ServedEndpoints(cfg.identity, prompts=hosted, tools=tools),
                    transport,
                    draining_line=CHANNEL_DRAINING_LINE if hosted is not None else DRAINING_LINE,
                    announce=announce,
                    serving=hosted.serving if hosted is not None else None,
                )
        finally:
            if transport is not None:
                await transport.close()
    finally:
        if provider is not None:
            await provider.aclose()


@dataclass(frozen=True)
class _HostPlaces:
    state_dir: str | None
    work_dir: Path | None
    workers: int | None
    warn: Callable[[str], None]
    no_telemetry: bool = False


async def _host_channels(
    cfg: Config,
    started: contextlib.AsyncExitStack,
    transport: Transport | None,
    provider: Provider | None,
    application_tools: ApplicationTools,
    places: _HostPlaces,
) -> tuple[PromptsChannel | None, JobsChannel | None, HostedChannels | None, Telemetry | None]:
    """Every channel that runs the agent, on one Server sharing the provider, the stores and
    the tool set; closed (abandoning what still runs) when ``started`` unwinds. The telemetry
    handle is the one the runs started, None when nothing runs."""
    from fisk_ai.serve.jobs.hosting import take_jobs
    from fisk_ai.serve.prompts.hosting import prompts_channel, shared_resources
    from fisk_ai.serve.server import HostedChannels

    if provider is None:
        return None, None, None, None
    resources = await started.enter_async_context(
        shared_resources(
            cfg,
            provider=provider,
            application_tools=application_tools,
            state_dir=places.state_dir,
            work_dir=places.work_dir,
            warn=places.warn,
            no_telemetry=places.no_telemetry,
        )
    )
    channels: list[tuple[Channel, int]] = []
    jobs: JobsChannel | None = None
    if takes_jobs(cfg):
        jobs = await started.enter_async_context(take_jobs(cfg, resources, workers=places.workers))
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
    return prompts, jobs, hosted, resources.telemetry


def banner(
    cfg: Config,
    version: str,
    *,
    prompts: PromptsChannel | None,
    tools: tuple[ToolsServer, ServedSelection] | None,
    work_dir: Path | None,
    jobs: tuple[JobsChannel, bool] | None = None,
    telemetry: bool = False,
) -> str:
    """The startup banner: what is served, where, and with which limits. Each row says what
    the process started: ``tools`` is the tool server with its selection, Slack is listed
    because the banner is printed only once every configured channel is open, ``telemetry``
    whether the started handle exports (a switch or variable can turn the configuration's
    export off, and a process running no agent loop starts none)."""
    from fisk_ai.serve.memory import memory_location
    from fisk_ai.util.durations import format_duration

    queue = jobs[0] if jobs is not None else None
    endpoints = (
        ([queue.name] if queue is not None else [])
        + (["a2a/prompts"] if prompts is not None else [])
        + (["a2a"] if tools is not None else [])
        + (["slack"] if answers_slack(cfg) else [])
    )
    runs = prompts is not None or queue is not None or answers_slack(cfg)
    top: list[tuple[str, list[str]]] = [("Endpoints", endpoints)]
    if runs:
        top.append(("Model", [cfg.llm.model]))
    top += _context_rows(cfg, only_jobs=prompts is None and tools is None, jobs=queue is not None)
    if runs:
        top.append(("Sessions", [sessions_label(cfg)]))
        top.append(("Memory", [memory_location(cfg)]))
        top.append(("Knowledge", [knowledge_label(cfg)]))
        if cfg.mcp_clients:
            from fisk_ai.tools.mcp.sessions import server_endpoint

            top.append(
                (
                    "MCP Servers",
                    [f"{entry.name} ({server_endpoint(entry)})" for entry in cfg.mcp_clients],
                )
            )
    top.append(("Telemetry", [_enabled(telemetry)]))
    if work_dir is not None:
        top.append(("Tool Directory", [str(work_dir)]))
    if runs:
        top.append(("Tool Timeout", [format_duration(cfg.harness.tool_timeout)]))
    sections: list[tuple[str, list[tuple[str, list[str]]], str]] = []
    if jobs is not None:
        channel, from_flag = jobs
        source = "--workers" if from_flag else "config"
        top.append(("Queue Workers", [f"{channel.options.workers} ({source})"]))
        sections.append(("Taking queued jobs", _jobs_rows(channel), PROMPTS_TOOL_NOTE))
    if prompts is not None:
        sections.append(("Answering prompts over a2a", _prompts_rows(cfg), PROMPTS_TOOL_NOTE))
    if tools is not None:
        sections.append(("Serving tools over a2a", _tools_rows(cfg, *tools), ""))
    if cfg.expose.agent.slack is not None:
        sections.append(
            ("Answering in Slack", _slack_rows(cfg.expose.agent.slack), PROMPTS_TOOL_NOTE)
        )
    width = 4 + max(
        len(label) for label, _ in [*top, *(row for _, rows, _ in sections for row in rows)]
    )
    lines = [f"Serving {cfg.identity}/{version}:", ""]
    lines += _rows(top, indent="", width=width)
    for title, rows, note in sections:
        lines += ["", f"  {title}:", ""]
        lines += _rows(rows, indent="  ", width=width)
        if note:
            lines.append(f"    {note}")
    return "\n".join(lines) + "\n"


def knowledge_label(cfg: Config) -> str:
    """Knowledge as the banner names it: disabled, or the tier it searches (lexical, or hybrid
    with its embeddings model) over its directory. A search whose embedder does not answer
    falls back to the lexical tier and says so in its result."""
    if not cfg.harness.knowledge.enabled:
        return "disabled"
    from fisk_ai.knowledge.access import knowledge_directory

    embeddings = cfg.harness.knowledge.embeddings
    tier = "lexical" if embeddings is None else f"hybrid with {embeddings.model}"
    return f"enabled, {tier} ({knowledge_directory(cfg)})"


def sessions_label(cfg: Config) -> str:
    """The session backend as the banner names it: the jetstream backend with its stream."""
    from fisk_ai.config import JetStreamSessionsOptions, StoreBackend

    sessions = cfg.harness.sessions
    options = sessions.backend_options
    if sessions.backend is StoreBackend.JETSTREAM and isinstance(options, JetStreamSessionsOptions):
        return f"jetstream ({options.stream})"
    return sessions.backend.value


def _enabled(value: bool) -> str:
    return "enabled" if value else "disabled"


def _context_rows(cfg: Config, *, only_jobs: bool, jobs: bool) -> list[tuple[str, list[str]]]:
    """The NATS contexts: the queue's when jobs are taken, and the agent's when the process
    reaches NATS through it, unless the queue's is the only one in use and the same."""
    queue_context = cfg.expose.agent.jobs.nats_context if cfg.expose.agent.jobs else ""
    rows: list[tuple[str, list[str]]] = []
    if jobs:
        rows.append(("Queue Context", [queue_context]))
    if reaches_nats(cfg) and (not (jobs and only_jobs) or queue_context != cfg.nats_context):
        rows.append(("Agent Context", [cfg.nats_context]))
    return rows


def _jobs_rows(jobs: JobsChannel) -> list[tuple[str, list[str]]]:
    from fisk_ai.serve.jobs.wire import queue_stream
    from fisk_ai.util.durations import format_duration

    settings = jobs.settings
    return [
        ("Queue", [f"{jobs.options.queue} (stream {queue_stream(jobs.options.queue)})"]),
        ("Task Type", [jobs.options.task_type]),
        ("Run Time", [format_duration(settings.run_time)]),
        ("Tries", [str(settings.tries) if settings.tries > 0 else "unlimited"]),
        ("Concurrency", [str(settings.concurrency)]),
    ]


def _prompts_rows(cfg: Config) -> list[tuple[str, list[str]]]:
    from fisk_ai.a2a.transport import SUBJECT_PREFIX, task_subject

    a2a = cfg.expose.agent.a2a
    assert a2a is not None and a2a.prompts is not None
    return [
        ("Requests", [task_subject(cfg.identity)]),
        ("Cancels", [f"{SUBJECT_PREFIX}.cancel.{cfg.identity}.*"]),
        ("Workers", [str(a2a.prompts.workers)]),
    ]


def _slack_rows(slack: SlackExposure) -> list[tuple[str, list[str]]]:
    from fisk_ai.util.durations import format_duration

    return [
        ("Workers", [str(slack.workers)]),
        ("Progress", ["disabled" if slack.no_progress else "enabled"]),
        ("Answer Grace", [format_duration(slack.answer_grace)]),
    ]


def _tools_rows(
    cfg: Config, server: ToolsServer, selection: ServedSelection
) -> list[tuple[str, list[str]]]:
    from fisk_ai.util.durations import format_duration

    a2a = cfg.expose.agent.a2a
    assert a2a is not None
    withheld = list(selection.withheld)
    if cfg.harness.memory.enabled and not any(name.startswith("memory") for name in withheld):
        withheld.append("memory tools")
    if cfg.harness.knowledge.enabled and not any(name.startswith("knowledge") for name in withheld):
        withheld.append("knowledge tools")
    rows: list[tuple[str, list[str]]] = [
        ("Discovery", [server.discovery_subject]),
        ("Tools", [server.tool_subject]),
        ("Concurrency", [str(a2a.max_concurrent_tools)]),
        ("Tool Timeout", [format_duration(a2a.tool_timeout)]),
        ("Exposed", list(server.tool_names) or ["none"]),
    ]
    if withheld:
        rows.append(("Withheld", withheld))
    return rows


def _rows(rows: list[tuple[str, list[str]]], *, indent: str, width: int) -> list[str]:
    lines: list[str] = []
    for label, values in rows:
        first, *rest = values
        lines.append(f"{indent}{label.rjust(width)}: {first}")
        lines += [f"{indent}{' ' * (width + 2)}{value}" for value in rest]
    return lines
