"""The `fisk` console script: parse the command line, dispatch, and turn failures into one line."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

from fisk_ai import __version__
from fisk_ai.cli.flags import env_flag
from fisk_ai.errors import FiskError
from fisk_ai.util.sanitize import single_line

COMMAND_MODULES = (
    "run",
    "session",
    "info",
    "serve",
    "jobs",
    "mcp",
    "acp",
    "knowledge",
    "discover",
)
"""The modules of fisk_ai.cli that register a command, in the order `fisk --help` lists them."""
MODULE_OF_COMMAND = {name: name for name in COMMAND_MODULES} | {
    "rag": "knowledge",
    "k": "knowledge",
}
"""Every name (aliases too) a command answers to, and the module that registers it: a command
line naming one imports that module alone, since importing all of them costs more than some
commands take to run."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone when it names one."""
    parser = argparse.ArgumentParser(
        prog="fisk",
        description="Fisk AI Toolkit: command-line applications as agents operators can trust.",
    )
    parser.add_argument("--version", action="version", version=f"fisk-ai {__version__}")
    subcommands = parser.add_subparsers(title="commands", metavar="COMMAND")
    module = MODULE_OF_COMMAND.get(command or "")
    for name in (module,) if module else COMMAND_MODULES:
        importlib.import_module(f"fisk_ai.cli.{name}").register(subcommands)
    return parser


def named_command(argv: Sequence[str]) -> str | None:
    """The command a command line names: its first word, unless that is one of the top level's
    own options (`fisk --help` lists every command)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def entry() -> None:
    """The console script: run, flush, and leave without the interpreter's teardown, which costs
    over half a second once the anthropic SDK is loaded and has nothing left to clean up."""
    exit_code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(exit_code)


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(named_command(words))
    args = parser.parse_args(words)
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
