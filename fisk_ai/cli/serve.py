"""`fisk serve`: host the agent behind the endpoints its configuration enables, until interrupted.

This build answers prompts and serves tools over a2a, both on one connection; a configuration
enabling queued jobs or Slack is refused with the endpoint named, rather than started without it.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from fisk_ai.cli.flags import add_common_flags, env_flag

if TYPE_CHECKING:
    from pathlib import Path

    from fisk_ai.agent.resources import ProviderOptions
    from fisk_ai.config import Config
    from fisk_ai.serve.prompts import PromptsServer
    from fisk_ai.serve.tools import ServedSelection, ToolsServer

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

    from fisk_ai.config import Mode, load, require_something_to_serve

    verbose = bool(args.verbose) or env_flag("VERBOSE")
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    cfg = load(args.config, Mode.SERVE)
    require_something_to_serve(cfg)
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

    from fisk_ai.agent.application import load_application_tools, run_tool_set, tool_filter
    from fisk_ai.agent.resources import build_provider
    from fisk_ai.serve.connection import connect_transport
    from fisk_ai.serve.draining import (
        CHANNEL_DRAINING_LINE,
        DRAINING_LINE,
        ServedEndpoints,
        serve_until_stopped,
    )
    from fisk_ai.serve.prompts import answer_prompts
    from fisk_ai.serve.tools import ToolsOptions, ToolsServer, select_served_tools
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
                        selection.exposed,
                        ToolsOptions(
                            identity=cfg.identity,
                            version=version,
                            max_concurrent=a2a.max_concurrent_tools,
                            tool_timeout=a2a.tool_timeout,
                            work_dir=work_dir,
                        ),
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
    from fisk_ai.serve.memory import memory_location
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


def knowledge_label(cfg: Config) -> str:
    """Knowledge as the banner names it: disabled, or the lexical tier over its directory.
    Hosting refuses what is not built (embeddings) before the banner is printed, so "enabled"
    here always means the tools run."""
    if not cfg.harness.knowledge.enabled:
        return "disabled"
    from fisk_ai.knowledge.access import knowledge_directory

    return f"enabled, lexical ({knowledge_directory(cfg)})"


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
