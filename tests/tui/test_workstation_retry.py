"""Issue 14: a model call the API turned away for the moment (529, 429) counts down its retry
on the status bar, through the real SDK against the fake Messages API."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.message import Message

from fisk_ai.agent.events import StatusEvent, StatusPhase
from fisk_ai.llm.anthropic import AnthropicProvider
from fisk_ai.tui.bridge import EventArrived
from fisk_ai.tui.status import RetryWait, RunState, StatusLine
from tests.fakes.messages_api import FakeMessagesAPI, error, reply, text
from tests.patience import DEADLINE
from tests.tui.workstation import SIZE, build_app
from tests.tui.workstation_driver import screen_text, settle, status_text


async def test_a_529_counts_down_its_retry_then_the_answer_arrives(tmp_path: Path) -> None:
    retry_seen = asyncio.Event()

    def watch(message: Message) -> None:
        if not isinstance(message, EventArrived):
            return
        event = message.event
        if isinstance(event, StatusEvent) and event.phase == StatusPhase.RETRYING:
            retry_seen.set()

    with FakeMessagesAPI() as api:
        api.script([error(529, "Overloaded", retry_after_ms=10), reply(text("made it"))])
        # The retry is held at the fake until the countdown has been read.
        second_attempt = api.hold(2)
        provider = AnthropicProvider("key", base_url=api.base_url, max_retries=2)
        app, agent = build_app(tmp_path, provider)
        try:
            async with app.run_test(size=SIZE, message_hook=watch) as pilot:
                await asyncio.wait_for(retry_seen.wait(), timeout=DEADLINE)
                await pilot.pause()
                assert "[running]  retrying in 1s (attempt 2 of 3)" in status_text(app)
                app.run_screen._tick()
                await pilot.pause()
                assert "retrying now (attempt 2 of 3)" in status_text(app)
                second_attempt.set()
                await settle(app, pilot)
                assert "made it" in screen_text(app)
                assert "retrying" not in status_text(app)
        finally:
            second_attempt.set()
            await agent.close()
            await provider.aclose()


def test_at_80_columns_the_countdown_keeps_its_seconds() -> None:
    line = StatusLine(
        RunState.RUNNING,
        model="claude-sonnet-4-5-with-a-long-name",
        session="2a9Wsnapshotsession00000000",
        activity="waiting for the model",
        elapsed=12,
        retry=RetryWait(seconds_left=3, attempt=2, attempts=3),
    )
    assert line.text().startswith("[running]  retrying in 3s (attempt 2 of 3)  tokens=0")
    narrow = line.text(40)
    assert narrow == "[running]  retrying in 3s   ? help"
