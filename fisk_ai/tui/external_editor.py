"""Ctrl-G: the chat bar's prompt edited in the operator's own editor.

The editor is ``$VISUAL``, else ``$EDITOR``, split into words as a shell would split them but
never run by one, and ``vi`` when neither is set and it is installed. The prompt goes to a file
only the owner can read, the terminal is handed to the editor for as long as it runs, and the
file is removed afterwards whatever happened. The edited text comes back with its trailing line
breaks dropped (editors end a file with one); an editor that exits with a failure status changes
nothing.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fisk_ai.errors import FiskError
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from textual.app import App

__all__ = [
    "EDITOR_VARIABLES",
    "FALLBACK_EDITOR",
    "NO_EDITOR",
    "NO_TERMINAL",
    "EditorFailed",
    "EditorUnavailable",
    "edit_prompt",
    "editor_command",
    "run_editor",
]

EDITOR_VARIABLES = ("VISUAL", "EDITOR")
"""Where the editor is named, the first one set winning, as git and the shells read them."""
FALLBACK_EDITOR = "vi"
NO_EDITOR = "no editor to open the prompt in: set EDITOR to one (for example EDITOR=nano)"
NO_TERMINAL = "the prompt cannot be edited in an editor here: this terminal cannot be handed over"


class EditorUnavailable(FiskError):
    """No editor can be started: none is named, or the one named is not installed."""


class EditorFailed(FiskError):
    """The editor could not be started, or it exited with a failure status."""


def editor_command(environ: Mapping[str, str] | None = None) -> list[str]:
    """The editor's argument vector, its program resolved on ``PATH``, without the file."""
    environment = os.environ if environ is None else environ
    search_path = environment.get("PATH", os.defpath)
    for variable in EDITOR_VARIABLES:
        setting = environment.get(variable, "")
        try:
            words = shlex.split(setting)
        except ValueError as failure:
            raise EditorUnavailable(
                f"{variable} ({single_line(setting, 60)}) cannot be split into words: "
                f"{failure}; fix its quoting"
            ) from None
        if not words:
            continue
        program = shutil.which(words[0], path=search_path)
        if program is None:
            raise EditorUnavailable(
                f"the editor {single_line(words[0], 60)} named by {variable} is not installed "
                f"or not on PATH; set {variable} to one that is"
            )
        return [program, *words[1:]]
    fallback = shutil.which(FALLBACK_EDITOR, path=search_path)
    if fallback is None:
        raise EditorUnavailable(NO_EDITOR)
    return [fallback]


async def run_editor(
    command: Sequence[str], text: str, environ: Mapping[str, str] | None = None
) -> str:
    """Run ``command`` on a private temporary file holding ``text`` and return what it holds
    once the editor exits, without its trailing line breaks. The terminal must already be free
    for the editor (see ``edit_prompt``)."""
    descriptor, name = tempfile.mkstemp(prefix="fisk-prompt-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", errors="replace") as file:
            file.write(text)
        try:
            process = await asyncio.create_subprocess_exec(
                *command, str(path), env=None if environ is None else dict(environ)
            )
        except OSError as failure:
            raise EditorFailed(
                f"the editor {single_line(command[0], 60)} could not be started: "
                f"{failure.strerror}; the prompt is unchanged"
            ) from None
        with _terminal_interrupts_ignored():
            try:
                status = await process.wait()
            except asyncio.CancelledError:
                # The app is going away; an editor left running would hold the terminal.
                process.terminate()
                raise
        if status != 0:
            raise EditorFailed(f"the editor exited with status {status}; the prompt is unchanged")
        return _edited_text(path)
    finally:
        _remove(path)


def _edited_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace").rstrip("\r\n")


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


async def edit_prompt(
    app: App[Any], text: str, environ: Mapping[str, str] | None = None
) -> str | None:
    """Hand the terminal to the operator's editor on ``text`` and take it back; the edited text,
    or None (with a notice saying why) when there is no editor, it failed, or this terminal
    cannot be handed over."""
    from textual.app import SuspendNotSupported

    try:
        command = editor_command(environ)
        # The batch holds every repaint while the app is away: the screen keeps changing as a
        # turn runs, and a frame written then would reach the editor's terminal, or block on the
        # stopped writer. The whole screen is drawn again once the app is back.
        with app.batch_update(), app.suspend():
            return await run_editor(command, text, environ)
    except (EditorUnavailable, EditorFailed) as failure:
        app.notify(str(failure), severity="warning", markup=False)
    except SuspendNotSupported:
        app.notify(NO_TERMINAL, severity="warning", markup=False)
    return None


@contextmanager
def _terminal_interrupts_ignored() -> Iterator[None]:
    """While the editor runs the terminal is out of raw mode, so Ctrl-C or Ctrl-\\ typed there
    signals this process as well as the editor; they are meant for the editor alone, as git
    ignores them while its editor runs. Only the main thread can change a signal's handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGQUIT)}
    # A handler installed outside Python reads as None and could not be put back, so it stays.
    restorable = {number: handler for number, handler in previous.items() if handler is not None}
    for number in restorable:
        signal.signal(number, signal.SIG_IGN)
    try:
        yield
    finally:
        for number, handler in restorable.items():
            signal.signal(number, handler)
