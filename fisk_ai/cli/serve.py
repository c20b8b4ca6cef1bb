"""`fisk serve`: host the agent behind the endpoints its configuration enables, until interrupted.

This build serves tools over a2a; a configuration enabling answering prompts, queued jobs or
Slack is refused with the endpoint named, rather than started without it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from fisk_ai.cli.flags import add_common_flags, env_flag

if TYPE_CHECKING:
    from pathlib import Path

    from fisk_ai.a2a.nats import NatsTransport
    from fisk_ai.a2a.tools_server import ServedSelection, ToolsServer
    from fisk_ai.config import Config

DEFAULT_CONFIG = "agent.yaml"
DRAINING_LINE = "draining: the endpoints stop answering. Interrupt again to stop now"
STOPPED_AT_ONCE = 130


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "serve",
        help="serve the agent to other agents until interrupted",
        description="Host the agent behind the endpoints agent.yaml enables (in this build: "
        "its tools over a2a, expose.agent.a2a.serve_tools). The first interrupt drains, the "
        "second stops at once.",
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
    return asyncio.run(_serve(cfg, work_dir))


def refuse_endpoints_not_built(cfg: Config) -> None:
    """Fail, naming the endpoint, when the configuration enables one this build cannot serve."""
    from fisk_ai.errors import FiskError

    agent = cfg.expose.agent
    missing = [
        (agent.a2a is not None and agent.a2a.prompts is not None, "expose.agent.a2a.prompts"),
        (agent.jobs is not None, "expose.agent.jobs"),
        (agent.slack is not None, "expose.agent.slack"),
    ]
    for enabled, key in missing:
        if enabled:
            raise FiskError(
                f"{key} is not available in this build of fisk serve, which serves tools over "
                f"a2a only; remove {key} from {cfg.source}"
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


async def connect_transport(context_name: str | None, *, name: str) -> NatsTransport:
    """An a2a transport on its own connection to the server the NATS context describes."""
    from fisk_ai.a2a.nats import NatsTransport
    from fisk_ai.broker.context import connect_options, load_context
    from fisk_ai.errors import FiskError

    context = load_context(context_name)
    try:
        return await NatsTransport.open(connect_options(context), name=name)
    except FiskError:
        raise
    except Exception as error:
        reason = str(error) or type(error).__name__
        raise FiskError(
            f'cannot connect to NATS at {context.redacted_url} (NATS context "{context.name}"): '
            f"{reason}; check the context's url and credentials"
        ) from None


async def _serve(cfg: Config, work_dir: Path | None) -> int:
    from fisk_ai.a2a.tools_server import ToolsServer, select_served_tools
    from fisk_ai.agent.application import load_application_tools, run_tool_set, tool_filter
    from fisk_ai.util.sanitize import single_line

    a2a = cfg.expose.agent.a2a
    assert a2a is not None and a2a.serve_tools, "SERVE validation admits nothing else here"
    application_tools = await load_application_tools(cfg)
    for warning in application_tools.warnings:
        print(f"warning: {single_line(warning)}", file=sys.stderr)
    exposed = cfg.expose.agent.tools
    selection = select_served_tools(
        run_tool_set(cfg, application_tools),
        include=tool_filter(exposed.include),
        exclude=tool_filter(exposed.exclude),
        confirm_tags=cfg.harness.confirm_tags,
    )
    application = application_tools.application
    version = (application.version if application is not None else "") or "dev"
    transport = await connect_transport(cfg.nats_context, name=f"fisk-ai {cfg.identity}")
    try:
        server = ToolsServer(
            transport,
            identity=cfg.identity,
            version=version,
            tools=selection.exposed,
            max_concurrent=a2a.max_concurrent_tools,
            tool_timeout=a2a.tool_timeout,
            work_dir=work_dir,
        )
        await server.start()
        sys.stdout.write(banner(cfg, version, server, selection, work_dir))
        sys.stdout.flush()
        return await serve_until_stopped(server, transport)
    finally:
        await transport.close()


async def serve_until_stopped(server: ToolsServer, transport: NatsTransport) -> int:
    """Serve until the first interrupt or a fault, then drain; a second interrupt stops at
    once. A fault drains too and raises, so the process exits non-zero."""
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
        print(DRAINING_LINE, file=sys.stderr, flush=True)
        drain_asked.set()

    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, on_interrupt)
    try:
        waits: set[asyncio.Future[Any]] = {asyncio.ensure_future(drain_asked.wait())}
        if transport.fault is not None:
            waits.add(transport.fault)
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        fault = transport.fault
        failure = fault.result() if fault is not None and fault.done() else None
        for waiting in waits:
            if waiting is not fault:
                waiting.cancel()
        draining = asyncio.ensure_future(server.drain())
        stopping = asyncio.ensure_future(stop_asked.wait())
        await asyncio.wait({draining, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not draining.done():
            draining.cancel()
            return STOPPED_AT_ONCE
        stopping.cancel()
        if failure is not None:
            raise FiskError(
                f"the a2a service for {server.identity} failed ({failure}) and was drained; "
                "restart fisk serve once the NATS server is reachable"
            )
        return 0
    finally:
        for signal_number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signal_number)


def banner(
    cfg: Config,
    version: str,
    server: ToolsServer,
    selection: ServedSelection,
    work_dir: Path | None,
) -> str:
    """The startup banner: what is served, where, and with which limits."""
    from fisk_ai.util.durations import format_duration

    a2a = cfg.expose.agent.a2a
    assert a2a is not None
    top: list[tuple[str, list[str]]] = [
        ("Endpoints", ["a2a"]),
        ("Agent Context", [cfg.nats_context]),
        ("Telemetry", ["enabled" if cfg.telemetry.enabled else "disabled"]),
    ]
    if work_dir is not None:
        top.append(("Tool Directory", [str(work_dir)]))
    withheld = list(selection.withheld)
    if cfg.harness.memory.enabled and not any(name.startswith("memory") for name in withheld):
        withheld.append("memory tools")
    if cfg.harness.knowledge.enabled and not any(name.startswith("knowledge") for name in withheld):
        withheld.append("knowledge tools")
    tools: list[tuple[str, list[str]]] = [
        ("Discovery", [server.discovery_subject]),
        ("Tools", [server.tool_subject]),
        ("Concurrency", [str(a2a.max_concurrent_tools)]),
        ("Tool Timeout", [format_duration(a2a.tool_timeout)]),
        ("Exposed", list(server.tool_names) or ["none"]),
    ]
    if withheld:
        tools.append(("Withheld", withheld))
    width = 4 + max(len(label) for label, _ in [*top, *tools])
    lines = [f"Serving {cfg.identity}/{version}:", ""]
    lines += _rows(top, indent="", width=width)
    lines += ["", "  Serving tools over a2a:", ""]
    lines += _rows(tools, indent="  ", width=width)
    return "\n".join(lines) + "\n"


def _rows(rows: list[tuple[str, list[str]]], *, indent: str, width: int) -> list[str]:
    lines: list[str] = []
    for label, values in rows:
        first, *rest = values
        lines.append(f"{indent}{label.rjust(width)}: {first}")
        lines += [f"{indent}{' ' * (width + 2)}{value}" for value in rest]
    return lines
