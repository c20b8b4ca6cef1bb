"""The session browser's filter field."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input

from fisk_ai.tui.widgets.session_list import SessionList


class FilterInput(Input):
    """The filter: every keystroke narrows the listing; Enter or Down goes back to the list and
    Esc empties the filter."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "empty", "Clear filter", show=False),
        Binding("down", "to_list", "List", show=False),
    ]

    def action_empty(self) -> None:
        self.value = ""
        self.action_to_list()

    def action_to_list(self) -> None:
        self.screen.query_one(SessionList).focus()
