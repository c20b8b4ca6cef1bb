"""`fisk mcp`: serve the agent's selected commands to MCP clients over streamable HTTP."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from fisk_ai.cli.flags import add_common_flags, add_no_telemetry_flag, log_to_stderr

if TYPE_CHECKING:
    from fisk_ai.config import Config
    from fisk_ai.mcpserver.serving import McpSelection, ServeOptions
    from fisk_ai.telemetry import Telemetry

DEFAULT_CONFIG = "agent.yaml"
DEFAULT_PORT = 8080
DEFAULT_ADDRESS = "127.0.0.1"
PORT_VARIABLE = "FISK_AI_MCP_PORT"
ADDRESS_VARIABLE = "FISK_AI_MCP_ADDRESS"


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "mcp",
        help="serve the agent's commands to MCP clients until interrupted",
        description="Serve the commands expose.agent.tools selects over MCP (streamable HTTP "
        "at /mcp, and at / as the Go fisk-ai serves it). Needs an expose.agent.mcp block. The "
        "first interrupt drains, the second stops at once.",
    )
    parser.add_argument(
        "--config", default=DEFAULT_CONFIG, help="the agent configuration (default: agent.yaml)"
    )
    parser.add_argument(
        "--port",
        help=f"the port to listen on (env {PORT_VARIABLE}; then expose.agent.mcp.port; "
        f"default {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--address",
        help=f"the address to listen on (env {ADDRESS_VARIABLE}; then expose.agent.mcp.address; "
        f"default {DEFAULT_ADDRESS})",
    )
    parser.add_argument(
        "--work-dir",
        metavar="DIR",
        help="the directory commands run in (absolute, existing; default: this one)",
    )
    add_no_telemetry_flag(parser)
    add_common_flags(parser)
    parser.set_defaults(handler=run)


def listen_port(flag: str | None, cfg: Config) -> int:
    """The port: --port, then FISK_AI_MCP_PORT, then expose.agent.mcp.port, then 8080."""
    from fisk_ai.errors import FiskError

    for value, name in ((flag, "--port"), (os.environ.get(PORT_VARIABLE), PORT_VARIABLE)):
        if value:
            try:
                port = int(value)
            except ValueError:
                port = -1
            if not 0 <= port <= 65535:
                raise FiskError(f"{name} is {value!r}, which is not a port from 0 to 65535")
            return port
    mcp = cfg.expose.agent.mcp
    return mcp.port if mcp is not None and mcp.port else DEFAULT_PORT


def listen_address(flag: str | None, cfg: Config) -> str:
    """The address: --address, then FISK_AI_MCP_ADDRESS, then expose.agent.mcp.address."""
    mcp = cfg.expose.agent.mcp
    configured = mcp.address if mcp is not None else ""
    return flag or os.environ.get(ADDRESS_VARIABLE) or configured or DEFAULT_ADDRESS


KNOWLEDGE_PAIR_WARNINGS = {
    "knowledge_search": (
        "expose.agent.mcp.builtins serves knowledge_search without knowledge_enumerate: a "
        "caller can retrieve passages but cannot check that it has seen every document holding "
        "a term"
    ),
    "knowledge_enumerate": (
        "expose.agent.mcp.builtins serves knowledge_enumerate without knowledge_search: a "
        "caller learns which documents hold the words but cannot read their text"
    ),
}


def lone_knowledge_tool(served: set[str]) -> str | None:
    """The warning for serving one of the two knowledge tools without the other, or None."""
    knowledge = served & set(KNOWLEDGE_PAIR_WARNINGS)
    if len(knowledge) == 1:
        return KNOWLEDGE_PAIR_WARNINGS[knowledge.pop()]
    return None


def run(args: argparse.Namespace) -> int:
    import asyncio

    from fisk_ai.cli.serve import checked_work_dir
    from fisk_ai.config import Mode, load
    from fisk_ai.errors import FiskError
    from fisk_ai.serve.observability import start_hosted_telemetry

    log_to_stderr(verbose=bool(args.verbose))
    cfg = load(args.config, Mode.LENIENT)
    if cfg.expose.agent.mcp is None:
        raise FiskError(
            f"{cfg.source} has no expose.agent.mcp block, which is what lets fisk mcp serve; "
            "add expose.agent.mcp (an empty block takes the defaults)"
        )
    port = listen_port(args.port, cfg)
    address = listen_address(args.address, cfg)
    work_dir = checked_work_dir(args.work_dir)
    # Resolved before anything is opened, so a bad endpoint fails on a readable terminal.
    telemetry = start_hosted_telemetry(
        cfg, no_telemetry=args.no_telemetry, note=lambda text: print(text, file=sys.stderr)
    )
    try:
        return asyncio.run(_serve(cfg, address, port, work_dir, telemetry))
    finally:
        delivery = telemetry.shutdown()
        if telemetry.enabled:
            print(f"telemetry: {delivery.summary()}", file=sys.stderr)


async def _serve(cfg: Config, address: str, port: int, work_dir: Any, telemetry: Telemetry) -> int:
    from fisk_ai.agent.application import load_application_tools, run_tool_set, tool_filter
    from fisk_ai.errors import FiskError
    from fisk_ai.mcpserver.listener import bind, endpoint_url, serve_mcp
    from fisk_ai.mcpserver.serving import ServeOptions, ToolCalls, select_mcp_tools
    from fisk_ai.serve.memory import unopened_memory
    from fisk_ai.util.sanitize import single_line

    def say(text: str) -> None:
        print(single_line(text), file=sys.stderr, flush=True)

    mcp = cfg.expose.agent.mcp
    assert mcp is not None
    application_tools = await load_application_tools(cfg)
    for warning in application_tools.warnings:
        say(f"warning: {warning}")
    application = application_tools.application
    version = (application.version if application is not None else "") or "dev"
    # Imported MCP tools are not in this set at all: a third party's tool is never served on.
    tools = run_tool_set(cfg, application_tools, memory=unopened_memory(cfg))
    exposed = cfg.expose.agent.tools
    selection = select_mcp_tools(
        tools,
        include=tool_filter(exposed.include),
        exclude=tool_filter(exposed.exclude),
        confirm_tags=cfg.harness.confirm_tags,
        builtins=frozenset(builtin.value for builtin in mcp.builtins),
    )
    lone = lone_knowledge_tool({tool.name for tool in selection.exposed})
    if lone is not None:
        say(f"warning: {lone}")
    for name, reason in selection.unservable:
        say(f"warning: tool {name} is not served over MCP: {reason}")
    if not selection.exposed:
        raise FiskError(
            "no tools are available to serve over MCP; check application_path, include, "
            "exclude and expose.agent.tools"
        )
    options = ServeOptions(
        name=cfg.identity,
        version=version,
        instructions=mcp.instructions,
        max_concurrent=mcp.max_concurrent_tools,
        tool_timeout=mcp.tool_timeout,
        confirm=mcp.confirm_over_mcp,
        confirm_tags=tuple(cfg.harness.confirm_tags),
        work_dir=work_dir,
    )
    calls = ToolCalls(
        selection.exposed, options, log=lambda line: say(f"mcp: {line}"), telemetry=telemetry
    )
    sock = bind(address, port)
    url = endpoint_url(sock)

    def announce() -> None:
        sys.stdout.write(banner(options, selection, url))
        sys.stdout.flush()

    return await serve_mcp(calls, sock, announce=announce, say=say)


def banner(options: ServeOptions, selection: McpSelection, url: str) -> str:
    """The startup banner: where the endpoint is, its limits, what is served and withheld."""
    from fisk_ai.mcpserver.serving import confirm_summary
    from fisk_ai.util.durations import format_duration

    rows: list[tuple[str, list[str]]] = [
        ("Endpoint", [url]),
        ("Transport", ["streamable HTTP"]),
        ("Concurrency", [str(options.max_concurrent)]),
        ("Tool Timeout", [format_duration(options.tool_timeout)]),
    ]
    if selection.gated:
        rows.append(("Approval", [confirm_summary(options.confirm)]))
        rows.append(("Gated", [f"{name} ({tag})" for name, tag in selection.gated]))
    rows.append(("Exposed", [tool.name for tool in selection.exposed]))
    if selection.withheld:
        rows.append(("Withheld", list(selection.withheld)))
    width = 4 + max(len(label) for label, _ in rows)
    lines = [f"Serving {options.name}/{options.version} over MCP:", ""]
    for label, values in rows:
        first, *rest = values
        lines.append(f"{label.rjust(width)}: {first}")
        lines += [f"{' ' * (width + 2)}{value}" for value in rest]
    lines += ["", "Add it to an MCP client, for example Claude Code:", ""]
    lines.append(f"    claude mcp add --transport http {options.name} {url}")
    return "\n".join(lines) + "\n"
