"""Issue 14: Textual's command palette offers every action of the run screen with its key."""

from __future__ import annotations

from typing import Any

from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.screen import Screen

from fisk_ai.screens.run import RunScreen
from fisk_ai.workstation.app import FiskApp
from fisk_ai.workstation.commands import run_screen_commands
from tests.screens.held_bridge import SETUP, SIZE, HeldBridge


async def until_listed(pilot: Pilot[None], palette: Screen[Any], title: str) -> None:
    """Wait for the palette's search, which runs in a worker, to list ``title`` first."""
    hits = palette.query_one(CommandList)
    for _ in range(500):
        if hits.option_count and title in str(hits.get_option_at_index(0).prompt):
            return
        await pilot.pause()
    raise AssertionError(f"the palette never listed {title!r}")


async def test_ctrl_p_opens_the_palette_and_runs_the_chosen_action() -> None:
    app = FiskApp(HeldBridge(), SETUP)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.run_screen.side_panel
        shown_before = bool(panel.display)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"side panel")
        await until_listed(pilot, app.screen, "Side panel")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        assert bool(panel.display) is not shown_before


async def test_the_palette_lists_every_key_of_the_run_screen_with_its_key() -> None:
    app = FiskApp(HeldBridge(), SETUP)
    async with app.run_test(size=SIZE):
        listed = {
            command.title: command.keys for command in run_screen_commands(app, app.run_screen)
        }
    assert listed["Stop"] == "^c"
    assert listed["Leave"] == "^d"
    assert listed["Side panel"] == "f2"
    assert listed["Help"] == "? / f1"
    assert listed["Sessions"] == "f3"
    assert listed["Show or hide thinking"] == "z"
    assert listed["Top"] == "g / home"
    assert listed["Search"] == "/"
    assert {"Clear screen", "Fold output", "Next match", "Copy block"} <= listed.keys()
