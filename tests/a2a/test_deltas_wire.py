"""The pieces of an answer over a2a: sent only to a caller that asked for them, coalesced on the
serving side, and read back by the client; a caller that did not ask gets the reply set it got
before streaming existed, message for message."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fisk_ai.a2a.codec import decode, encode, schema_documents
from fisk_ai.a2a.events import delta_from_message, event_from_message
from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import (
    EventMessage,
    Message,
    RequestPrompt,
    TerminalError,
    TerminalResult,
    UnknownEvent,
)
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.a2a.transport import Delivery, task_subject
from fisk_ai.a2a.vocabulary import EVENT_TEXT_DELTA, EVENT_THINKING_DELTA, Direction
from fisk_ai.agent.events import DeltaEvent, TextDeltaEvent, ThinkingDeltaEvent
from fisk_ai.llm.deltas import Delta, DeltaKind, report_delta
from fisk_ai.llm.types import Message as ModelMessage
from fisk_ai.llm.types import Request, Response, Role, TextBlock, ThinkingBlock, Usage
from tests.a2a.upstream_schemas import UPSTREAM, upstream_documents, upstream_validator
from tests.agent.conftest import FakeTool
from tests.fakes.provider import answer, call, calls
from tests.serve.prompts import engine
from tests.serve.prompts.engine import StartAgent, client, prompt
from tests.serve.prompts.engine import exchange as checked_exchange

agent = engine.agent
broker = engine.broker
caller = engine.caller

PREFIX = "io.choria.fisk-ai.v1."
ANSWER = "Three consumers read ORDERS and none of them is behind."
PIECE = 4


def streamed(response: Response) -> Any:
    """A scripted reply whose text and thinking are handed on in pieces first, as a streaming
    provider does, all at once, faster than any interval."""

    def reply(request: Request) -> Response:
        for block in response.message.content:
            if not isinstance(block, TextBlock | ThinkingBlock):
                continue
            kind = DeltaKind.THINKING if isinstance(block, ThinkingBlock) else DeltaKind.TEXT
            for start in range(0, len(block.text), PIECE):
                report_delta(Delta(kind, block.text[start : start + PIECE]))
        return response

    return reply


def turn_replies(stream: bool) -> tuple[Any, ...]:
    first = calls(call("t1", "status"), text="Checking the consumers.", thinking="look first")
    last = answer(ANSWER)
    return (streamed(first), streamed(last)) if stream else (first, last)


async def exchange(transport: InProcessTransport, request: Message) -> list[Message]:
    """The reply set to ``request``. Each message of a named kind is checked against its
    schema, and each piece against the framing-only ``event.json``, as a Go peer checks an
    event kind it does not name."""
    if not request.model_dump().get("deltas"):
        return await checked_exchange(transport, request)
    arrived: asyncio.Queue[Delivery] = asyncio.Queue()

    async def keep(delivery: Delivery) -> None:
        arrived.put_nowait(delivery)

    inbox = await transport.subscribe(transport.new_inbox(), keep)
    await transport.publish(task_subject(engine.IDENTITY), encode(request), reply=inbox.subject)
    documents = upstream_documents() if UPSTREAM.is_dir() else list(schema_documents().values())
    messages: list[Message] = []
    while not messages or not isinstance(messages[-1], TerminalResult | TerminalError):
        async with asyncio.timeout(engine.WAIT.total_seconds()):
            delivery = await arrived.get()
        sent = json.loads(delivery.data)
        named = sent["protocol"] not in (EVENT_TEXT_DELTA, EVENT_THINKING_DELTA)
        schema = sent["protocol"] if named else "io.choria.fisk-ai.v1.event"
        assert [
            error.message for error in upstream_validator(documents, schema).iter_errors(sent)
        ] == []
        messages.append(decode(delivery.data, direction=Direction.TO_CALLER))
    await inbox.unsubscribe()
    return messages


def framing_free(messages: list[Message]) -> list[dict[str, Any]]:
    """Each message as sent, without what differs between two runs of one turn."""
    documents = []
    for message in messages:
        document = json.loads(encode(message))
        for volatile in ("id", "time", "request", "conversation", "traceparent"):
            document.pop(volatile, None)
        if "conversation_token" in document:
            document["conversation_token"] = "<token>"
        documents.append(document)
    return documents


async def test_a_caller_that_did_not_ask_gets_the_reply_set_of_a_run_that_never_streamed(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent((FakeTool("status"),), turn_replies(stream=False))
    before = await exchange(caller, prompt())
    await agent((FakeTool("status"),), turn_replies(stream=True))
    after = await exchange(caller, prompt())
    assert framing_free(after) == framing_free(before)
    assert [document["protocol"].removeprefix(PREFIX) for document in framing_free(after)] == [
        "ack",
        "event.status",
        "event.thinking",
        "event.text",
        "event.tool_call",
        "event.tool_result",
        "event.status",
        "event.text",
        "result",
    ]
    assert not [m for m in after if isinstance(m, UnknownEvent)]


async def test_a_request_that_does_not_ask_for_deltas_carries_no_deltas_field() -> None:
    request = prompt()
    assert "deltas" not in json.loads(encode(request))
    assert json.loads(encode(prompt(deltas=True)))["deltas"] is True


async def test_a_caller_that_asked_gets_the_pieces_before_the_whole_text(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent((FakeTool("status"),), turn_replies(stream=True))
    arrived: list[EventMessage | UnknownEvent] = []
    options = TurnOptions(deltas=True, on_event=arrived.append)
    await client(caller).ask("how are the consumers", options=options)

    pieces = [delta_from_message(message) for message in arrived]
    text = "".join(p.text for p in pieces if isinstance(p, TextDeltaEvent))
    thought = "".join(p.text for p in pieces if isinstance(p, ThinkingDeltaEvent))
    assert text == "Checking the consumers." + ANSWER
    assert thought == "look first"
    last_piece = max(i for i, piece in enumerate(pieces) if piece is not None)
    final = [i for i, m in enumerate(arrived) if getattr(event_from_message(m), "final", False)]
    assert final and last_piece < final[0]


async def test_a_burst_of_pieces_goes_out_as_a_few_joined_messages(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent((), (streamed(answer(ANSWER)),))
    messages = await exchange(caller, prompt(deltas=True))
    pieces: list[DeltaEvent] = [
        piece
        for piece in (delta_from_message(m) for m in messages if isinstance(m, UnknownEvent))
        if piece is not None
    ]
    assert "".join(piece.text for piece in pieces) == ANSWER
    assert len(pieces) <= 2 < -(-len(ANSWER) // PIECE)


async def test_pieces_travel_as_events_a_peer_without_them_keeps_by_their_framing(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    thought_then_answer = ModelMessage(
        Role.ASSISTANT, (ThinkingBlock("hmm", b"s"), TextBlock("ok"))
    )
    await agent((), (streamed(Response(thought_then_answer, "end_turn", Usage(1, 1))),))
    messages = await exchange(caller, prompt(deltas=True))
    kinds = {m.protocol for m in messages if isinstance(m, UnknownEvent)}
    assert kinds == {EVENT_TEXT_DELTA, EVENT_THINKING_DELTA}
    assert all(event_from_message(m) is None for m in messages if isinstance(m, UnknownEvent))


async def test_a_stream_false_request_gets_no_pieces_even_when_it_asks(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent((), (streamed(answer(ANSWER)),))
    messages = await exchange(caller, prompt(deltas=True, stream=False))
    assert not [m for m in messages if isinstance(m, UnknownEvent)]


def test_the_request_model_reads_deltas_on_every_turn_kind() -> None:
    assert RequestPrompt.model_fields["deltas"].default is False
