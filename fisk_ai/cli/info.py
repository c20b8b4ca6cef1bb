"""`fisk info`: what an agent would run with, read in the most lenient mode."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from fisk_ai.cli.flags import add_common_flags

if TYPE_CHECKING:
    from fisk_ai.lineui.info import InfoReport
    from fisk_ai.tools.mcp.sessions import ServerReport

DEFAULT_CONFIG = "agent.yaml"


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "info",
        help="show the model, tools, global flags and prompt an agent.yaml describes",
        description="Show what an agent.yaml describes: the model, where sessions and memory "
        "are kept, the tools the agent gets (and which wait for the operator), the "
        "application's global flags, the system prompt, and every warning.",
    )
    parser.add_argument(
        "--config", default=DEFAULT_CONFIG, help="the agent configuration (default: agent.yaml)"
    )
    parser.add_argument(
        "--no-color",
        action="store_true",
        default=bool(os.environ.get("NO_COLOR")),
        help="plain text even on a terminal (env NO_COLOR)",
    )
    add_common_flags(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from fisk_ai.agent.application import load_application_tools, operator_secret_env_names
    from fisk_ai.config import Mode, load
    from fisk_ai.lineui.info import (
        a2a_http_section,
        build_report,
        count_memories,
        info_tool_set,
        knowledge_section,
        print_rich,
        render_plain,
        with_section,
    )
    from fisk_ai.serve.remote import import_remote_tools

    cfg = load(args.config, Mode.LENIENT)

    async def gather() -> InfoReport:
        application_tools = await load_application_tools(cfg)
        mcp_servers: tuple[ServerReport, ...] = ()
        if cfg.mcp_clients:
            from fisk_ai.tools.mcp.sessions import discover_mcp_servers

            # Best effort: a server that is down is reported, not fatal.
            mcp_servers = await discover_mcp_servers(
                cfg.mcp_clients, secret_env_names=operator_secret_env_names(cfg)
            )
        async with import_remote_tools(cfg, strict=False) as remote:
            tool_set, collision = info_tool_set(cfg, application_tools, remote, mcp_servers)
            entries = await count_memories(cfg)
            report = build_report(
                cfg,
                application_tools,
                tool_set,
                remote,
                collision,
                entries,
                mcp_servers=mcp_servers,
            )
            report = with_section(report, await knowledge_section(cfg))
            return with_section(report, a2a_http_section(cfg))

    report = asyncio.run(gather())
    if args.no_color or not sys.stdout.isatty():
        sys.stdout.write(render_plain(report))
    else:
        print_rich(report, sys.stdout)
    return 0
