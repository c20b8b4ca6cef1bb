"""The help screen: every key of the run screen and every chat command."""

from __future__ import annotations

import textwrap
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from fisk_ai.tui.chat_commands import ESCAPED_SLASH, ChatCommand

HELP_ROWS = (
    ("Run", ""),
    ("Esc", "stop the turn now; it ends suspended, a follow-up continues it"),
    ("Ctrl-C", "empty a draft; else stop the turn; on an empty bar, press twice to leave"),
    ("Ctrl-D", "leave from an empty bar; the conversation is kept and can be resumed"),
    ("Ctrl-L", "empty the screen; the conversation is kept"),
    ("F2", "show or hide the side panel (tools, counters, turns to jump to)"),
    ("F3", "browse the stored sessions; Enter opens one read-only, q comes back"),
    ("F4", "explore the knowledge index: sources, search, match; Esc comes back"),
    ("Tab", "move between the chat bar and the transcript"),
    ("?, F1", "this help (Esc or q closes it)"),
    ("Ctrl-P", "the command palette: find any action by name, with its key"),
    ("Chat bar", ""),
    ("Enter", "send"),
    ("Ctrl-J", "start a new line (Shift-Enter too, where the terminal reports it)"),
    ("Up / Down", "recall earlier prompts (from the first / last line)"),
    ("Up in an empty bar", "take the last queued prompt back to edit"),
    ("PgUp / PgDn", "scroll the transcript (Ctrl-Home / Ctrl-End: top / follow)"),
    ("Ctrl-O", "expand or fold the last tool result"),
    ("Ctrl-U, Ctrl-Z", "delete to the start of the line, undo"),
    ("Ctrl-R", "search the prompts sent in every session (again: an older match)"),
    ("Ctrl-G", "edit the prompt in $VISUAL or $EDITOR"),
    ("Tab after /", "complete the chat command"),
    *((command.word, command.summary) for command in ChatCommand),
    (f"{ESCAPED_SLASH}text", "send text that starts with a slash"),
    ("Transcript (its letter keys act while the chat bar is empty)", ""),
    ("arrows, PgUp / PgDn", "move between blocks, page"),
    ("g / G", "top / bottom"),
    ("[ / ]", "previous / next prompt"),
    ("z / Z", "show or hide the thinking / fold or unfold all output"),
    ("Enter / Space", "fold or unfold the focused block"),
    ("/ , n / N", "search, next / previous match"),
    ("y / c", "copy the whole transcript / the focused block"),
    ("Questions", ""),
    ("Left / Right, Enter", "choose a button; No is focused first"),
    ("Esc", "answer No (or none)"),
)


# The modal's border, padding and scrollbar take this many columns of the screen.
FRAME_WIDTH = 6
SHORTEST_DESCRIPTION = 20


def help_text(width: int | None = None) -> str:
    """The help as aligned rows; given a ``width``, a long description wraps under itself."""
    key_width = max(len(key) for key, does in HELP_ROWS if does)
    indent = 2 + key_width + 2
    room = None if width is None else max(SHORTEST_DESCRIPTION, width - indent)
    lines: list[str] = []
    for key, does in HELP_ROWS:
        if not does:
            lines.append(("\n" if lines else "") + key)
            continue
        wrapped = textwrap.wrap(does, room, break_on_hyphens=False) if room else [does]
        lines.append(f"  {key.ljust(key_width)}  {wrapped[0]}")
        lines += [" " * indent + more for more in wrapped[1:]]
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: auto; max-width: 100%; height: auto; max-height: 90%;
        border: round $accent; border-title-align: center; background: $surface; padding: 0 1;
    }
    HelpScreen #help-text { width: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "close", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.border_title = "help"
        with scroll:
            yield Static(help_text(), markup=False, id="help-text")

    def on_resize(self) -> None:
        self.query_one("#help-text", Static).update(help_text(self.size.width - FRAME_WIDTH))

    def action_close(self) -> None:
        self.dismiss(None)
