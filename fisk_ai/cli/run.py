"""`fisk run [prompt...]`: ask the agent something; the answer alone on stdout."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from fisk_ai.cli.flags import (
    add_common_flags,
    add_hosted_run_flags,
    add_output_flag,
    env_flag,
    run_options_from,
)

DEFAULT_PROMPT = "assist the user"


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "run",
        help="run the agent on a prompt",
        description="Run the agent on a prompt. The answer alone goes to stdout (with "
        "--output json or stream-json, the run as JSON); tool calls, narration, warnings and "
        "the run summary go to stderr. On a terminal, each model turn's text is shown on "
        "stderr as it is written (--no-stream prints it whole). Every run is journaled and "
        "can be continued with --resume.",
    )
    parser.add_argument("prompt", nargs="*", help="the prompt (words are joined by spaces)")
    parser.add_argument("--config", default="agent.yaml", help="the agent configuration")
    parser.add_argument(
        "--resume",
        metavar="ID",
        help="continue the journaled session ID (with --nats-context, the conversation token)",
    )
    parser.add_argument("--state-dir", help="the file session backend's directory")
    add_hosted_run_flags(parser)
    parser.add_argument(
        "--no-tui", action="store_true", help="line output even on a terminal (env NO_TUI)"
    )
    add_output_flag(parser)
    parser.add_argument(
        "--no-stream",
        action="store_true",
        help="line output: print narration and the answer whole once each is complete, "
        "instead of as they are written (env NO_STREAM)",
    )
    parser.add_argument(
        "--nats-context",
        metavar="NAME",
        help="talk to the agent this NATS context reaches instead of hosting one here",
    )
    parser.add_argument(
        "--identity",
        metavar="NAME",
        help="with --nats-context: the agent to talk to (default: identity in --config)",
    )
    add_common_flags(parser)
    parser.set_defaults(handler=run)


# What the worker does with these is its own business: a client that typed one would expect an
# effect it cannot have. From the environment they are ignored, since nobody typed them.
WORKER_FLAGS = {
    "api_key": "--api-key",
    "base_url": "--base-url",
    "trace": "--trace",
    "http_debug": "--http-debug",
    "verbose": "--verbose",
    "state_dir": "--state-dir",
    "record": "--record",
    "replay": "--replay",
    "no_telemetry": "--no-telemetry",
}


def _check_client_mode(args: argparse.Namespace) -> None:
    from fisk_ai.errors import FiskError

    if args.identity and not args.nats_context:
        raise FiskError(
            "--identity names a remote agent and needs --nats-context to reach it; add "
            "--nats-context or drop --identity"
        )
    if not args.nats_context:
        return
    for attribute, flag in WORKER_FLAGS.items():
        if getattr(args, attribute):
            raise FiskError(
                f"{flag} describes work the remote agent does, so it is refused with "
                f"--nats-context; drop {flag}"
            )
    if args.identity:
        # The A2A wire code is not imported unless there is an identity to check.
        from fisk_ai.a2a.transport import task_subject

        try:
            task_subject(args.identity)
        except ValueError:
            raise FiskError(
                f"--identity {args.identity!r} is not letters, digits, - and _ only; pass the "
                "identity the agent serves as"
            ) from None


def _check_resume_and_prompt(args: argparse.Namespace) -> None:
    from fisk_ai.errors import FiskError

    if args.resume is not None and not args.resume.strip():
        raise FiskError(
            "--resume needs a session id and was given an empty one; pass an ID that "
            "fisk session ls shows, or drop --resume to start a new session"
        )
    for word in args.prompt:
        try:
            word.encode("utf-8")
        except UnicodeEncodeError as bad:
            # The command line is decoded with surrogateescape: U+DCxx stands for byte xx.
            byte = ord(word[bad.start]) & 0xFF
            raise FiskError(
                f"the prompt is not valid UTF-8 text (byte 0x{byte:02x}); pass the prompt in UTF-8"
            ) from None


def run(args: argparse.Namespace) -> int:
    from fisk_ai.errors import FiskError

    if args.resume and args.prompt:
        raise FiskError(
            "--resume continues a stored conversation and takes no prompt; drop the prompt "
            "or the --resume flag"
        )
    if args.force and not args.resume:
        raise FiskError("--force only applies to --resume; drop --force")
    _check_resume_and_prompt(args)
    _check_client_mode(args)
    # The full screen draws on stderr, so it needs all three streams on the terminal.
    terminal = sys.stdin.isatty() and sys.stdout.isatty() and sys.stderr.isatty()
    # Output for a program is the line surface's: a script that asked for JSON on stdout gets
    # it even when it happens to run on a terminal.
    line_output = args.no_tui or env_flag("NO_TUI") or args.output != "text"
    full_screen = terminal and not line_output
    if not (full_screen or args.replay or args.nats_context):
        # The SDK takes about a second to import; start now so it overlaps reading the
        # configuration and introspecting the application. A run that turns out not to need it
        # has lost nothing but a background import. The full screen imports it itself, after
        # its first frame, so that the import does not hold the frame up.
        from fisk_ai.llm.anthropic import prewarm

        prewarm()
    options = run_options_from(
        args, prompt=" ".join(args.prompt).strip() or DEFAULT_PROMPT, resume=args.resume or ""
    )
    if full_screen:
        from fisk_ai.workstation.host import run_full_screen

        return run_full_screen(options)
    from fisk_ai.lineui.output import OutputFormat
    from fisk_ai.lineui.run import run_line_mode

    return run_line_mode(options, OutputFormat(args.output))
