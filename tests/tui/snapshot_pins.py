"""What the workstation's snapshots pin: the sizes, the session's name, a turn that stays in flight,
and the clocks stopped."""

from __future__ import annotations

import asyncio

import pytest
from textual.pilot import Pilot

from fisk_ai.llm.types import Request, Response
from fisk_ai.serve.prompts import LOCAL, ConversationNaming
from fisk_ai.workstation.app import FiskApp
from tests.fakes.provider import ScriptedProvider

ACCEPTANCE_SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 45), id="160x45")]
SESSION = "2a9Wsnapshotsession00000000"


class StallingProvider(ScriptedProvider):
    """Answers from its script, then keeps the next model call waiting: a turn in flight."""

    async def call(self, request: Request) -> Response:
        if not self._replies:
            await asyncio.Event().wait()
        return await super().call(request)


# The hosted engine mints the conversation's token, which a local run journals under.
FIXED_SESSION = ConversationNaming(lambda: SESSION, LOCAL.session_id)


def stop_the_clock(pilot: Pilot[None]) -> None:
    """The status bar and the result headers count seconds, and the chat bar's cursor blinks:
    neither moves, so the picture is stable."""
    assert isinstance(pilot.app, FiskApp)
    pilot.app.run_screen.ticker.pause()
    pilot.app.run_screen.activity_seconds = 0
    pilot.app.run_screen.chat.cursor_blink = False
