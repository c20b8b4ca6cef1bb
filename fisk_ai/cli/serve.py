"""`fisk serve`: host the agent behind the endpoints its configuration enables, until interrupted.

This build answers prompts and serves tools over a2a, both on one connection, takes queued
jobs off a Choria asyncjobs work queue, and answers mentions in Slack threads. The flags are
read here; the worker itself is ``fisk_ai.serve.worker.serve_agent``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from fisk_ai.cli.flags import add_common_flags, add_no_telemetry_flag, log_to_stderr
from fisk_ai.serve.banner import PROMPTS_TOOL_NOTE, knowledge_label

if TYPE_CHECKING:
    from pathlib import Path

    from fisk_ai.agent.resources import ProviderOptions

__all__ = ["PROMPTS_TOOL_NOTE", "checked_work_dir", "knowledge_label", "register", "run"]

DEFAULT_CONFIG = "agent.yaml"


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

    from fisk_ai.agent.resources import provider_name
    from fisk_ai.config import Mode, load, require_something_to_serve
    from fisk_ai.serve.banner import answers_slack
    from fisk_ai.serve.oplog import log_operator_lines
    from fisk_ai.serve.worker import ServeOptions, serve_agent
    from fisk_ai.util.sanitize import single_line

    log_to_stderr(verbose=bool(args.verbose))
    log_operator_lines(sys.stderr)
    cfg = load(args.config, Mode.SERVE)
    require_something_to_serve(cfg)
    if answers_slack(cfg):
        from fisk_ai.serve.slack.hosting import slack_tokens

        slack_tokens(os.environ)
    options = ServeOptions(
        provider=provider_options(args),
        state_dir=args.state_dir,
        work_dir=checked_work_dir(args.work_dir),
        workers=args.workers,
        no_telemetry=args.no_telemetry,
    )

    def warn(text: str) -> None:
        print(f"warning: {single_line(text)}", file=sys.stderr)

    def note(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    def announce(banner: str) -> None:
        sys.stdout.write(banner)
        sys.stdout.flush()
        if provider_name(cfg, options.provider) == "anthropic":
            from fisk_ai.llm.anthropic import prewarm

            # The SDK's import costs more CPU than the rest of the startup; begun after the
            # banner it holds no endpoint back, and it is done before most first prompts.
            prewarm()

    return asyncio.run(serve_agent(cfg, options, warn=warn, note=note, announce=announce))


def provider_options(args: argparse.Namespace) -> ProviderOptions:
    from fisk_ai.agent.resources import ProviderOptions

    return ProviderOptions(
        api_key=args.api_key or os.environ.get("ANTHROPIC_API_KEY", ""),
        base_url=args.base_url or os.environ.get("ANTHROPIC_BASE_URL", ""),
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
