"""`fisk session ls | show ID | browse | answer ID CALL_ID | rm ID`: the journaled
conversations."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from fisk_ai.cli.flags import add_common_flags, add_hosted_run_flags

DEFAULT_CONFIG = "agent.yaml"
NO_CONFIG_TO_RESUME = (
    "resuming needs --config naming the agent.yaml to run the session with; leave and pass it"
)


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "session",
        help="list, show, answer and remove journaled conversations",
        description="List, show and remove journaled conversations, and answer a tool call a "
        "session is waiting on. Without --config the file backend under --state-dir (default: "
        "the XDG state directory) is read.",
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

    browse = actions.add_parser(
        "browse",
        help="browse sessions full screen: filter, preview, open, resume, remove",
        description="List the sessions of the configured backend full screen, filter them as "
        "you type, preview and open a transcript, resume one in the run screen (r), and remove "
        "one after confirming. Resuming runs the agent of --config, which defaults here to "
        "agent.yaml when the working directory has one, with the flags below as fisk run takes "
        "them. Needs a terminal; fisk session ls prints the listing as lines.",
    )
    add_hosted_run_flags(browse)
    browse.set_defaults(handler=run_browse)

    answer = actions.add_parser(
        "answer",
        help="supply the result of a deferred tool call",
        description="Journal the result of a tool call the session is waiting on (fisk session "
        "show lists them under Waiting on), then continue it with fisk run --resume ID. The "
        "tool is not called again. The answer is scanned for personal data as a tool's output "
        "is, under harness.pii.mode of --config (redact without --config).",
    )
    answer.add_argument("session_id", metavar="ID")
    answer.add_argument("call_id", metavar="CALL_ID", help="the tool_use id of the deferred call")
    answer.add_argument("text", metavar="TEXT", nargs="?", help="the result the model receives")
    answer.add_argument("--file", metavar="PATH", help="read the result from PATH instead of TEXT")
    answer.add_argument(
        "--error", action="store_true", help="mark the result as the call having failed"
    )
    answer.set_defaults(handler=run_answer)

    rm = actions.add_parser("rm", aliases=["delete"], help="remove a session")
    rm.add_argument("session_id", metavar="ID")
    rm.set_defaults(handler=run_rm)
    # The group's flags are taken after the action too (`fisk session browse --config X`);
    # suppressed defaults leave a value given before the action alone.
    for action in {id(choice): choice for choice in actions.choices.values()}.values():
        action.add_argument("--config", default=argparse.SUPPRESS, help="as fisk session --config")
        action.add_argument(
            "--state-dir", default=argparse.SUPPRESS, help="as fisk session --state-dir"
        )


def _config(args: argparse.Namespace) -> Any:
    """The configuration --config names, or None without one."""
    if not args.config:
        return None
    from fisk_ai.config import Mode, load

    return load(args.config, Mode.LENIENT)


def _store(args: argparse.Namespace, cfg: Any = None) -> Any:
    """The session store of ``cfg`` (loaded from --config when not given)."""
    if not args.config:
        # Without a configuration the file backend is meant; not loading the configuration
        # code keeps `fisk session ls` quick.
        from fisk_ai.sessions import lookup_backend

        return lookup_backend("file")(directory=args.state_dir)
    from fisk_ai.serve.stores import session_store_for

    return session_store_for(cfg if cfg is not None else _config(args), args.state_dir)


def run_ls(args: argparse.Namespace) -> int:
    import asyncio

    from fisk_ai.presentation import session_listing

    summaries = asyncio.run(_store(args).list())
    if not summaries:
        hint = "" if args.config else " (pass --config to read the backend an agent.yaml names)"
        print(f"No sessions{hint}")
        return 0
    sys.stdout.write(session_listing(summaries))
    return 0


def run_show(args: argparse.Namespace) -> int:
    import asyncio

    from fisk_ai.lineui.sessions import summary, transcript
    from fisk_ai.sessions import fold

    conversation = fold(asyncio.run(_store(args).read(args.session_id)))
    sys.stdout.write(summary(conversation))
    if args.transcript and not args.no_tui and _on_terminal():
        from fisk_ai.workstation.sessions_app import SessionsApp

        sys.stdout.flush()
        SessionsApp(conversation=conversation, thinking=args.thinking).run()
        return 0
    if args.transcript:
        print("\n--- transcript ---")
        for line in transcript(conversation, thinking=args.thinking):
            print(line)
    return 0


def run_browse(args: argparse.Namespace) -> int:
    from fisk_ai.errors import FiskError

    if not _on_terminal():
        raise FiskError(
            "fisk session browse needs a terminal on stdin and stdout; use fisk session ls to "
            "list sessions as lines"
        )
    from pathlib import Path

    from fisk_ai.workstation.sessions_app import SessionsApp

    if not args.config and Path(DEFAULT_CONFIG).is_file():
        args.config = DEFAULT_CONFIG
    refused = "" if args.config else NO_CONFIG_TO_RESUME
    chosen = SessionsApp(_store(args), resume_refused=refused).run()
    if not chosen:
        return 0
    return _resume_full_screen(args, chosen)


def _resume_full_screen(args: argparse.Namespace, session_id: str) -> int:
    from fisk_ai.cli.flags import run_options_from
    from fisk_ai.workstation.host import run_full_screen

    return run_full_screen(run_options_from(args, resume=session_id))


def _on_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def run_answer(args: argparse.Namespace) -> int:
    import asyncio

    from fisk_ai.agent.pii import deferred_answer_screen
    from fisk_ai.config.models import Pii
    from fisk_ai.lineui.surface import LineSurface
    from fisk_ai.sessions import answer_deferred

    content = _answer_content(args.text, args.file)
    cfg = _config(args)
    # The answer reaches the model on the next resume as the call's result, past the run's own
    # guard, so it is scanned here; without --config under the configuration's default mode
    # (redact), since the configuration it will resume under is not known.
    mode = (cfg.harness.pii if cfg is not None else Pii()).mode
    # A scanner that will not build is a FiskError: one sentence, nothing journaled.
    screen = deferred_answer_screen(mode, LineSurface(sys.stderr))
    asyncio.run(
        answer_deferred(
            _store(args, cfg),
            args.session_id,
            args.call_id,
            content,
            is_error=args.error,
            screen=screen,
        )
    )
    from fisk_ai.presentation import DEFAULT_AGENT_CONFIG, resume_command, resume_flags

    flags = resume_flags(config=args.config or DEFAULT_AGENT_CONFIG, state_dir=args.state_dir)
    print(
        f"Answered {args.call_id} in session {args.session_id}; continue it with: "
        f"{resume_command(args.session_id, flags)}"
    )
    return 0


def _answer_content(text: str | None, path: str | None) -> str:
    from fisk_ai.errors import FiskError

    if text is not None and path is not None:
        raise FiskError("give the answer either as TEXT or with --file, not both")
    if path is None:
        if text is None:
            raise FiskError("give the answer as TEXT after CALL_ID, or read it with --file PATH")
        return text
    from pathlib import Path

    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FiskError(f"--file {path} is not UTF-8 text; give a text file") from None
    except OSError as exc:
        raise FiskError(
            f"--file {path} cannot be read ({exc.strerror}); give a readable file"
        ) from None


def run_rm(args: argparse.Namespace) -> int:
    import asyncio

    asyncio.run(_store(args).remove(args.session_id))
    print(f"Removed session {args.session_id}")
    return 0
