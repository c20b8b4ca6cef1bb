"""The workstation draws the answer as the model writes it: through the real SDK streaming from
the fake Messages API, over the same a2a path a local run takes, and in the transcript model
that lays out only the block still being written."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from fisk_ai.agent.events import (
    StatusEvent,
    StatusPhase,
    TextDeltaEvent,
    TextEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
    ToolCallEvent,
)
from fisk_ai.llm.anthropic import AnthropicProvider
from fisk_ai.screens.run import MODEL_WRITING, STREAM_STOPPED
from fisk_ai.sessions import fold
from fisk_ai.tui.transcript import ANSWER_MARKER, BlockKind, Transcript, completed_prose
from tests.fakes.messages_api import FakeMessagesAPI, reply, text
from tests.patience import DEADLINE
from tests.tui.workstation import SIZE, build_app
from tests.tui.workstation_driver import screen_text, settle, status_text

ANSWER = (
    "# Plan\n\nFirst we look at the **streams** that exist.\n\n"
    "- one\n- two\n\n```sh\nops status\n\nops say hi\n```\n\nThat is all."
)


def written(transcript: Transcript, width: int = 60) -> list[str]:
    return [row.text for row in transcript.rows(0, 1000, width)]


def streamed(answer: str, size: int) -> Transcript:
    transcript = Transcript()
    transcript.add_prompt("plan it")
    for start in range(0, len(answer), size):
        transcript.add_delta(TextDeltaEvent(answer[start : start + size]))
    return transcript


def test_a_block_is_complete_at_a_blank_line_outside_a_fence() -> None:
    assert completed_prose("one\ntwo\n\nthree") == len("one\ntwo\n\n")
    assert completed_prose("one\n\n```\ncode\n\nmore") == len("one\n\n")
    assert completed_prose("```\ncode\n\n```\n\nafter") == len("```\ncode\n\n```\n\n")
    # A longer run of the mark closes a fence; another mark does not.
    assert completed_prose("~~~\na\n\n```\n\nb") == 0
    assert completed_prose("still writing") == 0


@pytest.mark.parametrize("size", [1, 3, 17, 400])
def test_the_streamed_answer_is_drawn_as_its_complete_event_draws_it(size: int) -> None:
    transcript = streamed(ANSWER, size)
    while_written = written(transcript)
    transcript.add_event(TextEvent(ANSWER, final=True))

    # The same rows, but for the marker a final answer gets once it is known to be final.
    assert while_written[1] == ""
    assert written(transcript) == [while_written[0], ANSWER_MARKER, *while_written[2:]]
    assert not transcript.streaming
    assert [block.kind for block in transcript.blocks] == [
        BlockKind.PROMPT,
        BlockKind.META,
        BlockKind.NARRATION,
    ]


def test_blocks_already_written_are_not_laid_out_again() -> None:
    transcript = streamed("First paragraph.\n\nSecond one is ", 5)
    settled = transcript.blocks[1]
    transcript.add_delta(TextDeltaEvent("still going"))

    assert transcript.blocks[1] is settled
    assert written(transcript)[-1] == "Second one is still going"


def test_a_retry_takes_back_what_the_failed_attempt_wrote() -> None:
    transcript = streamed("A first attempt that", 4)
    transcript.add_event(StatusEvent(phase=StatusPhase.RETRYING, attempt=2, attempts=3))

    assert "A first attempt that" not in "\n".join(written(transcript))
    transcript.add_delta(TextDeltaEvent("Second"))
    assert written(transcript)[-1] == "Second"


def test_thinking_streams_into_its_folded_block_and_the_answer_after_it() -> None:
    transcript = Transcript()
    transcript.add_delta(ThinkingDeltaEvent("weighing\nthe options"))
    transcript.add_delta(TextDeltaEvent("The answer"))
    assert written(transcript) == ["+ 2 lines of thinking (z to expand)", "", "The answer"]

    transcript.add_event(ThinkingEvent("weighing\nthe options\nand more"))
    # The answer still being written stays after the thinking that replaced its deltas.
    assert written(transcript) == ["+ 3 lines of thinking (z to expand)", "", "The answer"]
    transcript.add_event(TextEvent("The answer is 42.", final=True))
    assert written(transcript)[-1] == "The answer is 42."
    assert not transcript.streaming


def test_a_tool_call_voids_deltas_that_never_got_their_text() -> None:
    transcript = streamed("Let me check", 3)
    transcript.add_event(ToolCallEvent("t1", "status", {}, ("ops", "status")))

    assert "Let me check" not in "\n".join(written(transcript))


def test_a_stopped_answer_stays_as_drawn_under_a_note() -> None:
    transcript = streamed("Half an ans", 4)
    transcript.keep_streamed("stopped")

    assert written(transcript)[-2:] == ["Half an ans", "stopped"]
    assert not transcript.streaming
    transcript.add_event(TextEvent("Next answer", final=True))
    assert "Half an ans" in "\n".join(written(transcript))


async def until(pilot: Pilot[None], condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(DEADLINE):
        while not condition():
            await pilot.pause(0.01)


async def test_the_answer_shows_while_the_model_is_still_writing_it(tmp_path: Path) -> None:
    answer = "Streams are fine.\n\nAll three of them answer."
    with FakeMessagesAPI() as api:
        api.script([reply(text(answer), chunk=6)])
        # Held after message_start, ping, the block's start and three pieces of text.
        release = api.pause(1, after=6)
        provider = AnthropicProvider("key", base_url=api.base_url, max_retries=0)
        app, agent = build_app(tmp_path, provider)
        try:
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: "Streams are fine." in screen_text(app))
                assert "All three" not in screen_text(app)
                assert MODEL_WRITING in status_text(app)
                release.set()
                await settle(app, pilot)
                shown = screen_text(app)
                assert ANSWER_MARKER in shown
                assert shown.count("Streams are fine.") == 1
                assert "All three of them answer." in shown
        finally:
            release.set()
            await agent.close()
            await provider.aclose()


async def test_esc_stops_the_answer_at_once_and_keeps_nothing_of_it(tmp_path: Path) -> None:
    with FakeMessagesAPI() as api:
        api.script([reply(text("Half of this answer, then the rest of it."), chunk=5)])
        release = api.pause(1, after=6)
        provider = AnthropicProvider("key", base_url=api.base_url, max_retries=0)
        app, agent = build_app(tmp_path, provider)
        try:
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: "Half of this" in screen_text(app))
                await pilot.press("escape")
                await settle(app, pilot)
                shown = screen_text(app)
                assert "Half of this" in shown
                assert STREAM_STOPPED in shown
                assert "the rest of it" not in shown
                conversation = fold(await agent.store.read(app.run_screen.session_id))
                assert [message.text for message in conversation.messages] == ["hello"]
        finally:
            release.set()
            await agent.close()
            await provider.aclose()


async def test_an_answer_the_api_broke_off_stays_marked_as_not_kept(tmp_path: Path) -> None:
    with FakeMessagesAPI() as api:
        answer = "Written up to here and then the connection dies."
        api.script([reply(text(answer), chunk=5, error_after=(8, "api_error"))])
        provider = AnthropicProvider("key", base_url=api.base_url, max_retries=0)
        app, agent = build_app(tmp_path, provider)
        try:
            async with app.run_test(size=SIZE) as pilot:
                await settle(app, pilot)
                rows = [row.strip() for row in screen_text(app).splitlines() if row.strip()]
                # Five pieces of five characters came before the error event.
                kept = rows.index("Written up to here and th")
                assert rows[kept + 1] == STREAM_STOPPED
                assert ANSWER_MARKER not in rows
        finally:
            await agent.close()
            await provider.aclose()
