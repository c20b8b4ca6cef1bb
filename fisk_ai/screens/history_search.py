"""Ctrl-R from the chat bar: search the prompts sent in every session, as a shell's reverse
search does. Typing narrows the list, newest first; Up and Down (or Ctrl-R again, for the next
older match) move through it; Enter dismisses the screen with the chosen prompt and Esc with
None. The prompts are shown as typed, never parsed as markup."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from fisk_ai.tui.prompt_history import matching_prompts
from fisk_ai.tui.transcript import plural
from fisk_ai.util.sanitize import single_line

SHOWN_LIMIT = 200
"""The characters of a prompt its row shows; the row is cut to the width after that."""
HISTORY_KEYS = "Enter use  Up/Down or Ctrl-R move  Esc cancel"
NO_HISTORY = "no prompts sent yet"
NO_MATCH = "no match"


def history_row(prompt: str, query: str) -> Content:
    """A prompt on one line, the first place it holds ``query`` in bold, and how many lines it has
    when it has more than one."""
    shown = single_line(prompt, SHOWN_LIMIT)
    row = Content(shown)
    needle = query.casefold()
    folded = shown.casefold()
    # Offsets in the folded text are offsets in the shown text only if no character folded to two.
    if needle and len(folded) == len(shown):
        start = folded.find(needle)
        if start >= 0:
            row = row.stylize("bold $accent", start, start + len(needle))
    line_count = prompt.count("\n") + 1
    if line_count > 1:
        row = row + Content.styled(f"  ({line_count} lines)", "dim")
    return row


class HistorySearch(ModalScreen[str | None]):
    """The search over ``entries`` (oldest first, as ``PromptHistory.entries`` gives them)."""

    DEFAULT_CSS = """
    HistorySearch { align: center middle; }
    HistorySearch > Vertical {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: round $accent; border-title-align: center; background: $surface; padding: 0 1;
    }
    HistorySearch #history-matches {
        height: auto; max-height: 12; border: none; padding: 0;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    HistorySearch #history-status { height: 1; color: $text-muted; margin-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("up", "move(-1)", "Newer", show=False),
        Binding("down,ctrl+r", "move(1)", "Older", show=False),
    ]

    search_text: var[str] = var("", init=False)
    """What the filter holds; every change narrows or widens the list."""
    matches: var[tuple[str, ...]] = var((), init=False, always_update=True)
    """The prompts that hold the query, newest first."""

    def __init__(self, entries: Sequence[str]) -> None:
        super().__init__()
        self.entries = tuple(entries)

    def compose(self) -> ComposeResult:
        frame = Vertical()
        frame.border_title = "prompt history"
        with frame:
            yield Input(placeholder="type to search the prompts you sent", id="history-query")
            matches = OptionList(id="history-matches")
            # The filter keeps the focus, so every printable key narrows the search.
            matches.can_focus = False
            yield matches
            yield Static("", markup=False, id="history-status")

    def on_mount(self) -> None:
        self.matches = tuple(matching_prompts(self.entries, ""))

    @property
    def match_list(self) -> OptionList:
        return self.query_one("#history-matches", OptionList)

    @property
    def chosen(self) -> str | None:
        """The highlighted prompt; None when nothing matches."""
        index = self.match_list.highlighted
        return self.matches[index] if index is not None and index < len(self.matches) else None

    @on(Input.Changed, "#history-query")
    def query_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.search_text = event.value

    def watch_search_text(self, search_text: str) -> None:
        self.matches = tuple(matching_prompts(self.entries, search_text))

    def watch_matches(self, matches: tuple[str, ...]) -> None:
        match_list = self.match_list
        match_list.set_options(Option(history_row(prompt, self.search_text)) for prompt in matches)
        match_list.highlighted = 0 if matches else None
        self._show_status()

    def _show_status(self) -> None:
        if not self.entries:
            counted = NO_HISTORY
        elif not self.matches:
            counted = NO_MATCH
        else:
            counted = plural(len(self.matches), "prompt")
        self.query_one("#history-status", Static).update(f"{counted}  {HISTORY_KEYS}")

    def action_move(self, step: int) -> None:
        match_list = self.match_list
        if match_list.highlighted is None:
            return
        last = len(self.matches) - 1
        match_list.highlighted = min(max(match_list.highlighted + step, 0), last)

    @on(Input.Submitted, "#history-query")
    def use_chosen(self, event: Input.Submitted) -> None:
        event.stop()
        if self.chosen is not None:
            self.dismiss(self.chosen)

    @on(OptionList.OptionSelected, "#history-matches")
    def clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.matches[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
