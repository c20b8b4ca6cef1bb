"""Flags more than one command takes, spelled and documented once."""

from __future__ import annotations

import argparse


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="print a traceback with an error (env VERBOSE)",
    )
