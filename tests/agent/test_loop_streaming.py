"""The loop hands the answer on piece by piece as the model writes it, to a sink that takes
pieces, while the journal keeps only whole answers: a stop mid-stream journals nothing for the
call, and a stream cut part way is asked again with one answer journaled.

The model is the real anthropic SDK against the local fake Messages API, streaming.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from fisk_ai.agent.events import (
    DeltaEvent,
    Event,
    StatusEvent,
    StatusPhase,
    TextDeltaEvent,
    TextEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
)
from fisk_ai.agent.outcome import Completed, Suspended
from fisk_ai.llm import anthropic as anthropic_provider
from fisk_ai.llm.anthropic import AnthropicProvider
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.records import Assistant
from tests.agent.conftest import make_runner, payloads, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.messages_api import reply, text, thinking
from tests.fakes.watched_messages_api import HANG_GUARD, WatchedMessagesAPI

ANSWER = "Three consumers read the ORDERS stream, and none of them is behind."


class StreamWatchingSink(RecordingSink):
    """Keeps the pieces of the answer in the same list as the events, in arrival order."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[Event | DeltaEvent] = []
        self._piece_arrived = asyncio.Event()

    def emit(self, event: Event) -> None:
        super().emit(event)
        self.pieces.append(event)

    def emit_delta(self, event: DeltaEvent) -> None:
        self.pieces.append(event)
        self._piece_arrived.set()

    def text_pieces(self) -> str:
        return "".join(piece.text for piece in self.pieces if isinstance(piece, TextDeltaEvent))

    async def until_text(self, wanted: str) -> None:
        """Return once the pieces so far spell ``wanted``: the pieces of one read arrive one by
        one, so the first piece alone says nothing of how many the model has written."""
        while self.text_pieces() != wanted:
            self._piece_arrived.clear()
            await self._piece_arrived.wait()


@pytest.fixture(autouse=True)
def no_wait_between_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anthropic_provider, "MID_STREAM_RETRY_DELAY", 0.0)


@pytest.fixture
def api() -> Iterator[WatchedMessagesAPI]:
    with WatchedMessagesAPI() as fake:
        yield fake


@pytest.fixture
async def provider(api: WatchedMessagesAPI) -> AsyncIterator[AnthropicProvider]:
    model = AnthropicProvider("sk-fake", base_url=api.base_url, max_retries=1)
    yield model
    await model.aclose()


async def test_the_answer_arrives_in_pieces_before_its_complete_text(
    api: WatchedMessagesAPI, provider: AnthropicProvider, store: FileSessionStore
) -> None:
    api.script([reply(text(ANSWER), chunk=6)])
    sink = StreamWatchingSink()
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as run:
        result = await run.start("how are the consumers doing")
    assert isinstance(result.outcome, Completed)
    assert sink.text_pieces() == ANSWER
    complete = next(i for i, piece in enumerate(sink.pieces) if isinstance(piece, TextEvent))
    last_piece = max(i for i, piece in enumerate(sink.pieces) if isinstance(piece, TextDeltaEvent))
    assert last_piece < complete


async def test_thinking_arrives_in_pieces_before_the_complete_thinking(
    api: WatchedMessagesAPI, provider: AnthropicProvider, store: FileSessionStore
) -> None:
    api.script([reply(thinking("look at the lag first", "c2ln"), text("fine"))])
    sink = StreamWatchingSink()
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as run:
        await run.start("how are the consumers doing")
    thought = "".join(p.text for p in sink.pieces if isinstance(p, ThinkingDeltaEvent))
    assert thought == "look at the lag first"
    assert sink.of(ThinkingEvent)[0].text == "look at the lag first"


async def test_a_sink_that_takes_no_pieces_gets_the_events_it_got_before(
    api: WatchedMessagesAPI, provider: AnthropicProvider, store: FileSessionStore
) -> None:
    api.script([reply(text(ANSWER))])
    sink = RecordingSink()
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as run:
        await run.start("how are the consumers doing")
    assert [type(event) for event in sink.events] == [StatusEvent, TextEvent]


async def test_a_stop_mid_stream_journals_nothing_for_the_call_and_resumes_cleanly(
    api: WatchedMessagesAPI, provider: AnthropicProvider, store: FileSessionStore
) -> None:
    api.script([reply(text("never finished"), chunk=4), reply(text(ANSWER))])
    api.pause(1, after=5)  # the stream starts, then "neve" and "r fi"; then it holds
    suspend = asyncio.Event()
    sink = StreamWatchingSink()
    async with make_runner(
        provider=provider, tools=toolset(), store=store, events=sink, suspend=suspend
    ) as run:
        running = asyncio.create_task(run.start("go"))
        await asyncio.wait_for(sink.until_text("never fi"), HANG_GUARD)
        suspend.set()
        stopped = await asyncio.wait_for(running, HANG_GUARD)
        records = list(await store.read(stopped.session_id))
    assert isinstance(stopped.outcome, Suspended)
    assert sink.text_pieces() == "never fi"
    assert not [payload for payload in payloads(records) if isinstance(payload, Assistant)]

    async with make_runner(
        provider=provider, tools=toolset(), store=store, events=RecordingSink()
    ) as resumed:
        result = await resumed.resume(stopped.session_id)
    assert isinstance(result.outcome, Completed) and result.answer == ANSWER
    assert api.requests[1]["messages"] == api.requests[0]["messages"]


async def test_a_stream_cut_mid_answer_is_asked_again_and_one_answer_is_journaled(
    api: WatchedMessagesAPI, provider: AnthropicProvider, store: FileSessionStore
) -> None:
    api.script([reply(text(ANSWER), cut_after=6), reply(text(ANSWER))])
    sink = StreamWatchingSink()
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as run:
        result = await run.start("how are the consumers doing")
        records = list(await store.read(result.session_id))
    answers = [payload for payload in payloads(records) if isinstance(payload, Assistant)]
    assert [answer.message.text for answer in answers] == [ANSWER]
    assert [event.phase for event in sink.of(StatusEvent)] == [
        StatusPhase.RETRYING,
        StatusPhase.CALLING_LLM,
    ]
    assert sink.of(TextEvent) == [TextEvent(ANSWER, final=True)]
