from __future__ import annotations

from collections.abc import Callable

from textual.app import App

from fisk_ai.screens.help import HelpScreen

SIZE = (100, 40)
SnapCompare = Callable[..., bool]


class HelpApp(App[None]):
    """Only the help screen, over an empty screen, in a fixed theme."""

    def on_mount(self) -> None:
        self.theme = "textual-dark"
        self.push_screen(HelpScreen())


def test_the_help_screen(snap_compare: SnapCompare) -> None:
    """Every key of the run screen, the chat bar, the transcript and the questions."""
    assert snap_compare(HelpApp(), terminal_size=SIZE)
