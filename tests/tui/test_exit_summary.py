"""The summary a run leaves on exit: there even when no event came, and timing the turns only."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.screens import run as run_module
from tests.fakes.provider import answer
from tests.tui.workstation_driver import gated, send, settle


async def test_leaving_before_the_first_event_still_counts_a_summary(tmp_path: Path) -> None:
    async with gated(tmp_path, [answer("never seen")]) as (app, pilot, _):
        await pilot.pause()
        await pilot.press("ctrl+c", "ctrl+c")
        await pilot.pause()
        session = app.bridge.session_id
    outcome = app.outcome
    # Left mid-turn, or just after the first Ctrl-C ended the turn: a summary either way.
    assert session
    assert outcome.result is not None
    assert outcome.result.session_id == session


class Clock:
    """Stands in for the screen's monotonic clock, so the test says how long each wait was."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


async def test_the_latency_counts_the_turns_and_not_the_wait_for_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(run_module, "time", clock)
    async with gated(tmp_path, [answer("first"), answer("second")]) as (app, pilot, provider):
        await pilot.pause()
        clock.now += 3  # the first turn waits 3 s for the model
        provider.gate.set()
        await settle(app, pilot)
        clock.now += 600  # ten minutes with the chat bar open
        provider.gate.clear()
        await send(app, pilot, "again")
        clock.now += 2
        provider.gate.set()
        await settle(app, pilot)
        clock.now += 600
        await pilot.press("ctrl+d")
    assert app.outcome.working_seconds == 5
