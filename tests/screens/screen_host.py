"""A bare app that shows one screen and keeps what it was dismissed with."""

from __future__ import annotations

from typing import Generic, TypeVar

from textual.app import App
from textual.screen import Screen

from tests.tui.settle import SteadyCursors, pinned

SIZE = (100, 30)
UNANSWERED = object()

ResultT = TypeVar("ResultT")


class ScreenHost(SteadyCursors, App[None], Generic[ResultT]):
    def __init__(self, screen: Screen[ResultT]) -> None:
        super().__init__()
        pinned(self)
        self.shown = screen
        self.answer: object = UNANSWERED

    def on_mount(self) -> None:
        self.push_screen(self.shown, self._answered)

    def _answered(self, value: ResultT | None) -> None:
        self.answer = value
