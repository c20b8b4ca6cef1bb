"""The search's match count says one matching line, not one matching lines."""

from __future__ import annotations

from textual.widgets import Static

from fisk_ai.agent.events import TextEvent
from fisk_ai.workstation.app import FiskApp
from fisk_ai.workstation.sessions_app import SessionsApp
from tests.screens.held_bridge import SETUP, HeldBridge
from tests.screens.journals import conversation_of, stream_report
from tests.tui.workstation import SIZE
from tests.tui.workstation_driver import toasts


async def test_one_match_is_one_matching_line_on_the_run_screen_and_in_the_viewer() -> None:
    app = FiskApp(HeldBridge(), SETUP)
    async with app.run_test(size=SIZE) as pilot:
        app.run_screen.bridge.emit(TextEvent("apple\nbanana"))
        await pilot.pause()
        app.run_screen.view.focus()
        await pilot.press("slash", *"banana", "enter")
        await pilot.pause()
        shown = toasts(app)
    assert "1 matching line (1 of 1)" in shown
    assert not any("1 matching lines" in toast for toast in shown)
    viewer = SessionsApp(conversation=conversation_of(stream_report()))
    async with viewer.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"1260", "enter")
        await pilot.pause()
        found = str(viewer.screen.query_one("#viewer-status", Static).render())
    assert "1 matching line " in found + " "
    assert "1 matching lines" not in found
