"""`fisk session ls | show ID | rm ID`: the journaled conversations."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from fisk_ai.cli.flags import add_common_flags


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "session",
        help="list, show and remove journaled conversations",
        description="List, show and remove journaled conversations. Without --config the file "
        "backend under --state-dir (default: the XDG state directory) is read.",
    )
    parser.add_argument("--config", help="read sessions from the backend this agent.yaml names")
    parser.add_argument("--state-dir", help="the file backend's directory (overrides the config)")
    add_common_flags(parser)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)

    ls = actions.add_parser("ls", aliases=["list"], help="list sessions, newest first")
    ls.set_defaults(handler=run_ls)

    show = actions.add_parser("show", aliases=["view"], help="show a session's counters")
    show.add_argument("session_id", metavar="ID")
    show.add_argument("--transcript", action="store_true", help="print the whole conversation")
    show.add_argument(
        "--thinking",
        action="store_true",
        default=bool(os.environ.get("THINKING")),
        help="include the model's reasoning in the transcript (env THINKING)",
    )
    show.add_argument(
        "--no-tui",
        action="store_true",
        default=bool(os.environ.get("NO_TUI")),
        help="print the transcript as lines even on a terminal (env NO_TUI)",
    )
    show.set_defaults(handler=run_show)

    rm = actions.add_parser("rm", aliases=["delete"], help="remove a session")
    rm.add_argument("session_id", metavar="ID")
    rm.set_defaults(handler=run_rm)


def _store(args: argparse.Namespace) -> Any:
    from fisk_ai.agent.stores import session_store_for
    from fisk_ai.config import Mode, load

    cfg = load(args.config, Mode.LENIENT) if args.config else None
    return session_store_for(cfg, args.state_dir)


def run_ls(args: argparse.Namespace) -> int:
    import asyncio

    from fisk_ai.lineui.sessions import listing

    summaries = asyncio.run(_store(args).list())
    if not summaries:
        hint = "" if args.config else " (pass --config to read the backend an agent.yaml names)"
        print(f"No sessions{hint}")
        return 0
    sys.stdout.write(listing(summaries))
    return 0


def run_show(args: argparse.Namespace) -> int:
    import asyncio

    from fisk_ai.lineui.sessions import summary, transcript
    from fisk_ai.sessions import fold

    conversation = fold(asyncio.run(_store(args).read(args.session_id)))
    sys.stdout.write(summary(conversation))
    if args.transcript:
        print("\n--- transcript ---")
        for line in transcript(conversation, thinking=args.thinking):
            print(line)
    return 0


def run_rm(args: argparse.Namespace) -> int:
    import asyncio

    asyncio.run(_store(args).remove(args.session_id))
    print(f"Removed session {args.session_id}")
    return 0
