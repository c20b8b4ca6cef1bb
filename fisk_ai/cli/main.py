"""The `fisk` console script: parse the command line, dispatch, and turn failures into one line."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from fisk_ai import __version__
from fisk_ai.cli import discover, info, jobs, knowledge, mcp, run, serve, session
from fisk_ai.cli.flags import env_flag
from fisk_ai.errors import FiskError
from fisk_ai.util.sanitize import single_line

COMMANDS = (run, session, info, serve, jobs, mcp, knowledge, discover)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fisk",
        description="Fisk AI Toolkit: command-line applications as agents operators can trust.",
    )
    parser.add_argument("--version", action="version", version=f"fisk-ai {__version__}")
    subcommands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for command in COMMANDS:
        command.register(subcommands)
    return parser


def entry() -> None:
    """The console script: run, flush, and leave without the interpreter's teardown, which costs
    over half a second once the anthropic SDK is loaded and has nothing left to clean up."""
    exit_code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(exit_code)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 1
    verbose = bool(getattr(args, "verbose", False)) or env_flag("VERBOSE")
    try:
        exit_code: int = handler(args)
    except FiskError as error:
        if verbose:
            import traceback

            traceback.print_exc()
        # The message may quote a file, a tool or a peer: one plain line, never terminal control.
        print(f"fisk: error: {single_line(str(error))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return exit_code
