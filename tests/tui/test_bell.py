"""The bell: a question that waits on the operator rings it, unless `harness.no_bell` is set."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from fisk_ai.config import Mode, parse
from fisk_ai.screens.question import ConfirmScreen
from fisk_ai.tools.questions import ConfirmQuestion
from fisk_ai.workstation.app import FiskApp
from tests.screens.answerable import until_answerable
from tests.screens.held_bridge import SETUP, SIZE, HeldBridge


@pytest.mark.parametrize("no_bell", [False, True])
async def test_a_question_rings_the_bell_unless_the_file_says_no_bell(no_bell: bool) -> None:
    from fisk_ai.workstation.host import bell_wanted

    cfg = parse(
        f"identity: ops\nsystem_prompt: hi\nharness:\n  no_bell: {str(no_bell).lower()}\n",
        Mode.LENIENT,
    )
    bridge = HeldBridge()
    app = FiskApp(bridge, dataclasses.replace(SETUP, bell=bell_wanted(cfg)))
    rung: list[None] = []
    async with app.run_test(size=SIZE) as pilot:
        app.bell = lambda: rung.append(None)  # type: ignore[method-assign]
        asking = asyncio.ensure_future(bridge.ask(ConfirmQuestion("remove ORDERS?")))
        while not isinstance(app.screen, ConfirmScreen):
            await pilot.pause()
        await until_answerable(app)
        await pilot.press("escape")
        assert await asking is False
    assert len(rung) == (0 if no_bell else 1)
