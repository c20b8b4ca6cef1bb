"""The approval modal over the run screen with a hostile argument, at the acceptance sizes: the
argument quoted as one word, what Always covers, the shortcuts on the buttons, No focused, and
the keys line the question shows once it takes keys."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from fisk_ai.screens.approval import ApprovalScreen
from tests.fakes.provider import call, calls
from tests.screens.answerable import until_answerable
from tests.tui.snapshot_pins import (
    ACCEPTANCE_SIZES,
    FIXED_SESSION,
    StallingProvider,
    stop_the_clock,
)
from tests.tui.workstation import build_app

SnapCompare = Callable[..., bool]
HOSTILE = "prod; rm -rf / $(whoami)"


@pytest.mark.parametrize("size", ACCEPTANCE_SIZES)
def test_an_approval_with_a_hostile_argument(
    snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]
) -> None:
    provider = StallingProvider([calls(call("t1", "stream_rm", {"stream": HOSTILE}))])
    app, _ = build_app(tmp_path, provider, prompt="remove the prod stream", naming=FIXED_SESSION)

    async def until_it_takes_keys(pilot: Pilot[None]) -> None:
        stop_the_clock(pilot)
        while not isinstance(pilot.app.screen, ApprovalScreen):
            await pilot.pause()
        await until_answerable(pilot.app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=until_it_takes_keys)


def test_an_approval_asking_why_not(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """After t: the field for the operator's sentence, with its own keys line."""
    provider = StallingProvider([calls(call("t1", "stream_rm", {"stream": HOSTILE}))])
    app, _ = build_app(tmp_path, provider, prompt="remove the prod stream", naming=FIXED_SESSION)

    async def until_the_field(pilot: Pilot[None]) -> None:
        stop_the_clock(pilot)
        while not isinstance(pilot.app.screen, ApprovalScreen):
            await pilot.pause()
        await until_answerable(pilot.app)
        pilot.app.screen.query_one("#approval-reason", Input).cursor_blink = False
        await pilot.press("t", *"use staging")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=until_the_field)
