"""A bare app that shows one modal and keeps what it was dismissed with."""

from __future__ import annotations

import os

from textual.app import App
from textual.screen import ModalScreen

os.environ["TEXTUAL_ANIMATIONS"] = "none"

SIZE = (100, 30)
UNANSWERED = object()


class ModalHost(App[None]):
    def __init__(self, modal: ModalScreen[object]) -> None:
        super().__init__()
        self.modal = modal
        self.answer: object = UNANSWERED

    def on_mount(self) -> None:
        self.push_screen(self.modal, self._answered)

    def _answered(self, value: object) -> None:
        self.answer = value
