"""`fisk serve`: host the agent behind the endpoints its configuration enables, until interrupted.

This build answers prompts and serves tools over a2a, both on one connection; a configuration
enabling queued jobs or Slack is refused with the endpoint named, rather than started without it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from fisk_ai.cli.flags import add_common_flags, env_flag

if TYPE_CHECKING:
    import asyncio
    from pathlib import Path

    from fisk_ai.a2a.nats import NatsTransport
    from fisk_ai.a2a.prompts_server import PromptsServer
    from fisk_ai.a2a.tools_server import ServedSelection, ToolsServer
    from fisk_ai.agent.resources import ProviderOptions
    from fisk_ai.config import Config

DEFAULT_CONFIG = "agent.yaml"
DRAINING_LINE = "draining: the endpoints stop answering. Interrupt again to stop now"
CHANNEL_DRAINING_LINE = (
    "draining: no new work is taken and running work stops where it can resume. "
    "Interrupt again to stop now"
)
PROMPTS_TOOL_NOTE = (
    "Answering a prompt runs the agent loop and reaches every tool the top-level include and "
    "exclude selected."
)
STOPPED_AT_ONCE = 130


class Endpoint(Protocol):
    """What `serve_until_stopped` needs of what it serves."""

    @property
    def identity(self) -> str: ...

    async def drain(self) -> None:
        """Take no new work, and return once the work it waits for has finished."""

    async def close(self) -> None:
        """Stop at once: abandon the work still running, which ends a drain under way."""


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "serve",
        help="serve the agent to other agents until interrupted",
        description="Host the agent behind the endpoints agent.yaml enables (in this build: "
        "answering prompts over a2a, expose.agent.a2a.prompts, and its tools over a2a, "
        "expose.agent.a2a.serve_tools). The first interrupt drains, the second stops at once.",
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
    add_common_flags(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from fisk_ai.config import Mode, load

    verbose = bool(args.verbose) or env_flag("VERBOSE")
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    cfg = load(args.config, Mode.SERVE)
    refuse_endpoints_not_built(cfg)
    work_dir = checked_work_dir(args.work_dir)
    return asyncio.run(_serve(cfg, work_dir, provider_options(args), args.state_dir))


def provider_options(args: argparse.Namespace) -> ProviderOptions:
    from fisk_ai.agent.resources import ProviderOptions

    return ProviderOptions(
        api_key=args.api_key or os.environ.get("ANTHROPIC_API_KEY", ""),
        base_url=args.base_url or os.environ.get("ANTHROPIC_BASE_URL", ""),
    )


def answers_prompts(cfg: Config) -> bool:
    a2a = cfg.expose.agent.a2a
    return a2a is not None and a2a.prompts is not None


def serves_tools(cfg: Config) -> bool:
    a2a = cfg.expose.agent.a2a
    return a2a is not None and a2a.serve_tools


def refuse_endpoints_not_built(cfg: Config) -> None:
    """Fail, naming the endpoint, when the configuration enables one this build cannot serve."""
    from fisk_ai.errors import FiskError

    agent = cfg.expose.agent
    missing = [
        (agent.jobs is not None, "expose.agent.jobs"),
        (agent.slack is not None, "expose.agent.slack"),
    ]
    for enabled, key in missing:
        if enabled:
            raise FiskError(
                f"{key} is not available in this build of fisk serve, which answers prompts "
                f"and serves tools over a2a only; remove {key} from {cfg.source}"
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
    cfg: Config, work_dir: Path | None, provider_options: ProviderOptions, state_dir: str | None
) -> int:
    import contextlib

    from fisk_ai.a2a.tools_server import ToolsServer, select_served_tools
    from fisk_ai.agent.application import load_application_tools, run_tool_set, tool_filter
    from fisk_ai.agent.resources import build_provider
    from fisk_ai.serve.connection import connect_transport
    from fisk_ai.serve.prompts import answer_prompts
    from fisk_ai.util.sanitize import single_line

    def warn(text: str) -> None:
        print(f"warning: {single_line(text)}", file=sys.stderr)

    a2a = cfg.expose.agent.a2a
    assert a2a is not None, "SERVE validation admits nothing else here"
    # Built before anything connects, so a missing key fails the process at once.
    provider = build_provider(cfg, provider_options) if answers_prompts(cfg) else None
    try:
        application_tools = await load_application_tools(cfg)
        for warning in application_tools.warnings:
            warn(warning)
        application = application_tools.application
        version = (application.version if application is not None else "") or "dev"
        transport = await connect_transport(
            cfg.nats_context, name=f"fisk-ai {cfg.identity}", fix="nats_context"
        )
        try:
            async with contextlib.AsyncExitStack() as started:
                prompts: PromptsServer | None = None
                if provider is not None:
                    prompts = await started.enter_async_context(
                        answer_prompts(
                            cfg,
                            transport,
                            provider=provider,
                            application_tools=application_tools,
                            state_dir=state_dir,
                            work_dir=work_dir,
                            warn=warn,
                        )
                    )
                tools: ToolsServer | None = None
                selection: ServedSelection | None = None
                if a2a.serve_tools:
                    exposed = cfg.expose.agent.tools
                    selection = select_served_tools(
                        run_tool_set(cfg, application_tools),
                        include=tool_filter(exposed.include),
                        exclude=tool_filter(exposed.exclude),
                        confirm_tags=cfg.harness.confirm_tags,
                    )
                    tools = ToolsServer(
                        transport,
                        identity=cfg.identity,
                        version=version,
                        tools=selection.exposed,
                        max_concurrent=a2a.max_concurrent_tools,
                        tool_timeout=a2a.tool_timeout,
                        work_dir=work_dir,
                    )
                    await tools.start()
                printed = banner(
                    cfg,
                    version,
                    prompts=prompts,
                    tools=tools,
                    selection=selection,
                    work_dir=work_dir,
                )

                def announce() -> None:
                    sys.stdout.write(printed)
                    sys.stdout.flush()

                return await serve_until_stopped(
                    ServedEndpoints(cfg.identity, prompts=prompts, tools=tools),
                    transport,
                    draining_line=CHANNEL_DRAINING_LINE if prompts is not None else DRAINING_LINE,
                    announce=announce,
                    serving=prompts.serving if prompts is not None else None,
                )
        finally:
            await transport.close()
    finally:
        if provider is not None:
            await provider.aclose()


class ServedEndpoints:
    """The endpoints of one `fisk serve` process, drained and stopped together.

    A drain stops every endpoint taking work first, then waits for the prompts being answered
    (their callers are waiting on the answer); tool calls already running are not waited for.
    Stopping at once abandons those prompts, each caller told with an error.
    """

    def __init__(
        self, identity: str, *, prompts: PromptsServer | None, tools: ToolsServer | None
    ) -> None:
        self._identity = identity
        self._prompts = prompts
        self._endpoints: list[Endpoint] = [
            endpoint for endpoint in (prompts, tools) if endpoint is not None
        ]
        self._leaving: asyncio.Future[None] | None = None

    @property
    def identity(self) -> str:
        return self._identity

    async def drain(self) -> None:
        import asyncio

        # Shielded: a stop arriving mid-way must not cut a service's unsubscribe short.
        await asyncio.shield(self._leave())
        if self._prompts is not None:
            await self._prompts.wait_idle()

    async def close(self) -> None:
        await self._leave()
        # Tool calls are left to end with the process, as a drain leaves them; the prompts'
        # callers are waiting on a terminal message, so their turns are abandoned explicitly.
        if self._prompts is not None:
            await self._prompts.close()

    def _leave(self) -> asyncio.Future[None]:
        """Every endpoint stops taking work, once however often it is asked."""
        import asyncio

        if self._leaving is None:
            self._leaving = asyncio.ensure_future(self._drain_each())
        return self._leaving

    async def _drain_each(self) -> None:
        for endpoint in self._endpoints:
            await endpoint.drain()


async def serve_until_stopped(
    server: Endpoint,
    transport: NatsTransport,
    *,
    draining_line: str = DRAINING_LINE,
    announce: Callable[[], None] | None = None,
    serving: asyncio.Future[None] | None = None,
) -> int:
    """Serve until the first interrupt or a fault, then drain; a second interrupt stops at
    once. A fault drains too and raises, so the process exits non-zero. ``announce`` runs once
    the interrupts are handled, so whoever it tells can interrupt at once. ``serving`` is the
    Server's work: ending with an error, it reports a channel's fault (the Server has drained
    itself by then)."""
    import asyncio
    import signal

    from fisk_ai.errors import FiskError

    loop = asyncio.get_running_loop()
    drain_asked = asyncio.Event()
    stop_asked = asyncio.Event()

    def on_interrupt() -> None:
        if drain_asked.is_set():
            stop_asked.set()
            return
        print(draining_line, file=sys.stderr, flush=True)
        drain_asked.set()

    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, on_interrupt)
    try:
        if announce is not None:
            announce()
        waits: set[asyncio.Future[Any]] = {asyncio.ensure_future(drain_asked.wait())}
        if transport.fault is not None:
            waits.add(transport.fault)
        if serving is not None:
            waits.add(serving)
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        fault = transport.fault
        failure = fault.result() if fault is not None and fault.done() else None
        for waiting in waits:
            if waiting is not fault and waiting is not serving:
                waiting.cancel()
        draining = asyncio.ensure_future(server.drain())
        stopping = asyncio.ensure_future(stop_asked.wait())
        await asyncio.wait({draining, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not draining.done():
            # Abandoning the work the drain waits for tells each waiting caller, and lets the
            # drain return rather than be cancelled part way through leaving the services.
            await server.close()
            await asyncio.wait({draining})
            return STOPPED_AT_ONCE
        stopping.cancel()
        channel_failure = _failure_of(serving)
        if failure is not None:
            raise FiskError(
                f"the a2a service for {server.identity} failed ({failure}) and was drained; "
                "restart fisk serve once the NATS server is reachable"
            )
        if channel_failure is not None:
            raise FiskError(
                f"a channel of {server.identity} failed ({channel_failure}) and was drained; "
                "restart fisk serve once what it reported is fixed"
            )
        return 0
    finally:
        for signal_number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signal_number)


def _failure_of(serving: asyncio.Future[None] | None) -> BaseException | None:
    if serving is None or not serving.done() or serving.cancelled():
        return None
    return serving.exception()


def banner(
    cfg: Config,
    version: str,
    *,
    prompts: PromptsServer | None,
    tools: ToolsServer | None,
    selection: ServedSelection | None,
    work_dir: Path | None,
) -> str:
    """The startup banner: what is served, where, and with which limits."""
    from fisk_ai.util.durations import format_duration

    endpoints = (["a2a/prompts"] if prompts is not None else []) + (
        ["a2a"] if tools is not None else []
    )
    top: list[tuple[str, list[str]]] = [("Endpoints", endpoints)]
    if prompts is not None:
        top.append(("Model", [cfg.llm.model]))
    top.append(("Agent Context", [cfg.nats_context]))
    if prompts is not None:
        top.append(("Sessions", [sessions_label(cfg)]))
        top.append(("Knowledge", [_enabled(cfg.harness.knowledge.enabled)]))
    top.append(("Telemetry", [_enabled(cfg.telemetry.enabled)]))
    if work_dir is not None:
        top.append(("Tool Directory", [str(work_dir)]))
    if prompts is not None:
        top.append(("Tool Timeout", [format_duration(cfg.harness.tool_timeout)]))
    sections: list[tuple[str, list[tuple[str, list[str]]], str]] = []
    if prompts is not None:
        sections.append(("Answering prompts over a2a", _prompts_rows(cfg), PROMPTS_TOOL_NOTE))
    if tools is not None and selection is not None:
        sections.append(("Serving tools over a2a", _tools_rows(cfg, tools, selection), ""))
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


def _prompts_rows(cfg: Config) -> list[tuple[str, list[str]]]:
    from fisk_ai.a2a.transport import SUBJECT_PREFIX, task_subject

    a2a = cfg.expose.agent.a2a
    assert a2a is not None and a2a.prompts is not None
    return [
        ("Requests", [task_subject(cfg.identity)]),
        ("Cancels", [f"{SUBJECT_PREFIX}.cancel.{cfg.identity}.*"]),
        ("Workers", [str(a2a.prompts.workers)]),
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
