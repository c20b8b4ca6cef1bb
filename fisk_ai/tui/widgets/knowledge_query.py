"""The explorer's query field: Enter runs the query in the view the explorer is in."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input


class QueryInput(Input):
    """An Input whose Enter is named in the footer, so the key that runs a query shows."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Run query"),
    ]
