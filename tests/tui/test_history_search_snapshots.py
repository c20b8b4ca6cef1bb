from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import Input

from tests.tui.history_search_app import SENT, SearchApp

SIZE = (80, 24)
SnapCompare = Callable[..., bool]


async def steady(pilot: Pilot[None]) -> None:
    """A fixed theme and a cursor that does not blink, so every run draws the same frame."""
    pilot.app.theme = "textual-dark"
    pilot.app.screen.query_one(Input).cursor_blink = False


MANY_SENT = (*SENT, *(f"prompt {number} " + "check the stream " * number for number in range(16)))


def test_the_history_search_narrowed(snap_compare: SnapCompare) -> None:
    """Typing `re` keeps the three prompts holding it, newest first, the match in bold on each, the
    two-line prompt on one row saying it has two; the newest is highlighted."""

    async def narrow(pilot: Pilot[None]) -> None:
        await steady(pilot)
        await pilot.press("r", "e")

    assert snap_compare(SearchApp(SENT), terminal_size=SIZE, run_before=narrow)


def test_the_history_search_over_many_long_prompts(snap_compare: SnapCompare) -> None:
    """Twelve rows show, each cut to the width with an ellipsis, the count and the keys below;
    Ctrl-R twice has moved the highlight two prompts older."""

    async def go_back(pilot: Pilot[None]) -> None:
        await steady(pilot)
        await pilot.press("ctrl+r", "ctrl+r")

    assert snap_compare(SearchApp(MANY_SENT), terminal_size=SIZE, run_before=go_back)
