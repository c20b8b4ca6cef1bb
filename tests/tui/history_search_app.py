"""An app that opens the prompt history's search at once, over prompts sent before."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import App

from fisk_ai.screens.history_search import HistorySearch

SENT = ("restart NATS", "list the streams", "Restart the broker\nthen check it", "show [b]x[/b]")
"""Oldest first, as the history gives them."""


class SearchApp(App[None]):
    """Opens the search over ``entries`` at once and records its answer."""

    def __init__(self, entries: Sequence[str]) -> None:
        super().__init__()
        self.entries = entries
        self.answers: list[str | None] = []

    def on_mount(self) -> None:
        self.push_screen(HistorySearch(self.entries), self.answers.append)
