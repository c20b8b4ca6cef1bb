"""The search field under a transcript."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input

from fisk_ai.tui.widgets.transcript_view import TranscriptView

SEARCH_PLACEHOLDER = "search (Enter finds, Esc cancels)"


class SearchInput(Input):
    """The search field: Enter searches, Esc gives up and hands the keys back to the view."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "give_up", "Cancel", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(placeholder=SEARCH_PLACEHOLDER, id=id)

    def action_give_up(self) -> None:
        self.value = ""
        self.display = False
        self.screen.query_one(TranscriptView).focus()
