"""`fisk acp`: the agent over the Agent Client Protocol on stdio, for Zed, Toad and other
editors and front ends that start an agent as a child process."""

from __future__ import annotations

import argparse
from typing import Any

from fisk_ai.cli.flags import add_common_flags, add_no_telemetry_flag, log_to_stderr


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "acp",
        help="serve the agent to an editor over the Agent Client Protocol (stdio)",
        description="Host the agent as fisk run does and serve it over the Agent Client "
        "Protocol on standard input and output until the client closes them. Every ACP session "
        "is a journaled conversation; session/load continues one. Logs go to stderr.",
    )
    parser.add_argument("--config", default="agent.yaml", help="the agent configuration")
    parser.add_argument("--state-dir", help="the file session backend's directory")
    parser.add_argument("--api-key", help="the Anthropic API key (env ANTHROPIC_API_KEY)")
    parser.add_argument(
        "--base-url", help="an Anthropic-compatible endpoint (env ANTHROPIC_BASE_URL)"
    )
    parser.add_argument("--record", metavar="FILE", help="record every model exchange to FILE")
    parser.add_argument(
        "--replay", metavar="FILE", help="answer from a recorded cassette, with no network"
    )
    add_no_telemetry_flag(parser)
    add_common_flags(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from fisk_ai.cli.flags import run_options_from
    from fisk_ai.config import Mode, load

    log_to_stderr(verbose=bool(args.verbose))
    # Read before stdout is handed to the protocol, so a mistake is told as every command
    # tells it: one sentence on stderr, exit 1.
    cfg = load(args.config, Mode.AGENT)
    if not cfg.application_path:
        from fisk_ai.errors import FiskError

        raise FiskError(
            f"{cfg.source} names no application_path, and fisk acp serves an application's "
            "agent; set application_path to the command-line application to serve"
        )
    options = run_options_from(args)
    if not options.provider.replay:
        from fisk_ai.llm.anthropic import prewarm

        prewarm()
    from fisk_ai.acp.stdio import serve_acp

    return serve_acp(cfg, options)
