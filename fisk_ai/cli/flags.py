"""Flags more than one command takes, spelled and documented once."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fisk_ai.serve.hosted import RunOptions


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="print a traceback with an error (env VERBOSE)",
    )


def add_no_telemetry_flag(parser: argparse.ArgumentParser) -> None:
    """--no-telemetry: export nothing whatever telemetry.enabled says. Typed only; the
    environment's switch is FISK_TELEMETRY_DISABLED=1."""
    parser.add_argument(
        "--no-telemetry",
        action="store_true",
        help="export no telemetry, whatever telemetry.enabled says",
    )


def env_flag(name: str) -> bool:
    """A boolean environment switch: set to anything but empty, 0, false or no."""
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def run_options_from(args: argparse.Namespace, *, prompt: str = "", resume: str = "") -> RunOptions:
    """The run the flags of ``args`` ask for, environment variables filling in what no flag said.
    `fisk run` has every flag; `fisk session browse` resuming a conversation has a few, and the
    rest come from the environment alone."""
    from fisk_ai.agent.resources import ProviderOptions
    from fisk_ai.serve.hosted import RunOptions

    def given(name: str) -> Any:
        return getattr(args, name, None)

    return RunOptions(
        config=args.config,
        prompt=prompt,
        resume=resume,
        force=bool(given("force")),
        state_dir=given("state_dir"),
        provider=ProviderOptions(
            api_key=given("api_key") or os.environ.get("ANTHROPIC_API_KEY", ""),
            base_url=given("base_url") or os.environ.get("ANTHROPIC_BASE_URL", ""),
            http_debug=bool(given("http_debug")) or env_flag("HTTP_DEBUG"),
            trace=given("trace") or "",
            record=given("record") or "",
            replay=given("replay") or "",
        ),
        tool_output=bool(given("tool_output")) or env_flag("TOOL_OUTPUT"),
        thinking=bool(given("thinking")) or env_flag("THINKING"),
        no_color=bool(given("no_color")) or bool(os.environ.get("NO_COLOR")),
        verbose=bool(given("verbose")) or env_flag("VERBOSE"),
        nats_context=given("nats_context") or "",
        identity=given("identity") or "",
        no_telemetry=bool(given("no_telemetry")),
    )
