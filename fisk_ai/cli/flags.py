"""Flags more than one command takes, spelled and documented once."""

from __future__ import annotations

import argparse
import os


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="print a traceback with an error (env VERBOSE)",
    )


def env_flag(name: str) -> bool:
    """A boolean environment switch: set to anything but empty, 0, false or no."""
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")
