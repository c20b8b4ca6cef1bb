"""Flags more than one command takes, spelled and documented once."""

from __future__ import annotations

import argparse
import os
import sys
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


def add_hosted_run_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of a run this process hosts: `fisk run`'s, and `fisk session browse`'s for the
    conversation it resumes with r, so a resume from the browser is the run the operator typed."""
    parser.add_argument("--api-key", help="the Anthropic API key (env ANTHROPIC_API_KEY)")
    parser.add_argument(
        "--base-url", help="an Anthropic-compatible endpoint (env ANTHROPIC_BASE_URL)"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="when resuming: continue although the configuration changed (not the provider)",
    )
    parser.add_argument(
        "--tool-output", action="store_true", help="show tool output (env TOOL_OUTPUT)"
    )
    parser.add_argument(
        "--thinking", action="store_true", help="show the model's reasoning (env THINKING)"
    )
    parser.add_argument(
        "--no-color", action="store_true", help="print the answer as raw markdown (env NO_COLOR)"
    )
    parser.add_argument(
        "--http-debug",
        action="store_true",
        help="log every HTTP exchange to ./http-debug.log (env HTTP_DEBUG)",
    )
    parser.add_argument("--trace", metavar="FILE", help="write model requests and replies to FILE")
    parser.add_argument("--record", metavar="FILE", help="record every model exchange to FILE")
    parser.add_argument(
        "--replay", metavar="FILE", help="answer from a recorded cassette, with no network"
    )
    add_no_telemetry_flag(parser)


OUTPUT_FORMATS = ("text", "json", "stream-json")


def add_output_flag(parser: argparse.ArgumentParser) -> None:
    """--output: what stdout receives. The values are ``fisk_ai.lineui.output.OutputFormat``'s,
    spelled here so that parsing the flags imports no surface."""
    parser.add_argument(
        "--output",
        choices=OUTPUT_FORMATS,
        default="text",
        help="stdout: text (the answer alone), json (one run result object at the end) or "
        "stream-json (one JSON line per event, the run result last); json and stream-json "
        "use the line surface and give each outcome its own exit code",
    )


def log_to_stderr(*, verbose: bool) -> None:
    """A server's log on stderr: its warnings, and with ``--verbose`` (or VERBOSE) what it
    does."""
    import logging

    logging.basicConfig(
        level=logging.INFO if verbose or env_flag("VERBOSE") else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def env_flag(name: str) -> bool:
    """A boolean environment switch: set to anything but empty, 0, false or no."""
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def run_options_from(args: argparse.Namespace, *, prompt: str = "", resume: str = "") -> RunOptions:
    """The run the flags of ``args`` ask for, environment variables filling in what no flag said.
    `fisk run` has every flag; `fisk session browse` resuming a conversation has those of a
    hosted run, and what neither names comes from the environment alone."""
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
        # Any value turns it on, as NO_COLOR does.
        no_stream=bool(given("no_stream")) or bool(os.environ.get("NO_STREAM")),
    )
