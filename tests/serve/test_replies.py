"""The one reply set both engines answer with: numbered without gaps, refusals closed with their
ending, and a message over the size cap trimmed rather than dropped."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from fisk_ai.a2a.codec import decode
from fisk_ai.a2a.in_process import InProcessBroker, InProcessTransport
from fisk_ai.a2a.messages import (
    Ack,
    EventStatus,
    EventToolCall,
    ExecResult,
    Identity,
    Message,
    ReplyHeader,
    RequestPrompt,
    StatusBody,
    TerminalError,
    TerminalResult,
    ToolCallBody,
    ToolReply,
    new_request,
    reply_header,
)
from fisk_ai.a2a.transport import Delivery
from fisk_ai.a2a.vocabulary import Direction, ErrorCode, StopReason
from fisk_ai.serve.replies import ReplySet, encode_fitting
from tests.patience import DEADLINE

AGENT = Identity(name="ops")
CALLER = Identity(name="peer")
SMALL = 2048


@pytest.fixture
async def broker() -> AsyncIterator[InProcessBroker]:
    broker = InProcessBroker()
    yield broker
    await broker.close()


class Inbox:
    """What arrives on one inbox, decoded."""

    def __init__(self) -> None:
        self.arrived: asyncio.Queue[Message] = asyncio.Queue()

    async def keep(self, delivery: Delivery) -> None:
        self.arrived.put_nowait(decode(delivery.data, direction=Direction.TO_CALLER))

    async def take(self, count: int) -> list[Message]:
        async with asyncio.timeout(DEADLINE):
            return [await self.arrived.get() for _ in range(count)]


async def reply_set(transport: InProcessTransport, inbox: Inbox, max_size: int = SMALL) -> ReplySet:
    subject = transport.new_inbox()
    await transport.subscribe(subject, inbox.keep)
    request = new_request(RequestPrompt, sender=CALLER, prompt="hi")
    return ReplySet(transport, request, subject, AGENT, max_size=max_size)


def status(header: ReplyHeader) -> EventStatus:
    return EventStatus(**header, block=StatusBody(phase="working"))


async def test_a_message_that_fails_leaves_no_gap_in_the_numbering(broker: InProcessBroker) -> None:
    inbox = Inbox()
    replies = await reply_set(broker.connect(), inbox)

    def broken(header: ReplyHeader) -> Message:
        raise ValueError("cannot be built")

    sent = [await replies.send(status), await replies.send(broken), await replies.send(status)]

    assert sent == [True, False, True]
    assert [message.sequence for message in await inbox.take(2)] == [1, 2]


async def test_every_reply_answers_the_request_and_is_addressed_back(
    broker: InProcessBroker,
) -> None:
    inbox = Inbox()
    replies = await reply_set(broker.connect(), inbox)

    await replies.send(status)

    [message] = await inbox.take(1)
    assert (message.request, message.conversation) == (
        replies.request.request,
        replies.request.conversation,
    )
    assert (message.sender, message.recipient) == (AGENT, CALLER)


async def test_a_refusal_is_a_refusing_ack_then_its_ending(broker: InProcessBroker) -> None:
    inbox = Inbox()
    replies = await reply_set(broker.connect(), inbox)

    await replies.refuse(
        "busy",
        lambda header: TerminalError(**header, error="busy", code=ErrorCode.CAPACITY),
    )

    ack, ending = await inbox.take(2)
    assert isinstance(ack, Ack) and not ack.accepted and ack.reason == "busy"
    assert isinstance(ending, TerminalError) and ending.code == ErrorCode.CAPACITY
    assert (ack.sequence, ending.sequence) == (1, 2)


async def test_a_result_over_the_size_cap_loses_the_end_of_its_text(
    broker: InProcessBroker,
) -> None:
    inbox = Inbox()
    replies = await reply_set(broker.connect(), inbox)
    text = "streams " * 1000

    sent = await replies.send(
        lambda header: TerminalResult(**header, stop_reason=StopReason.END_TURN, text=text)
    )

    [result] = await inbox.take(1)
    assert sent
    assert isinstance(result, TerminalResult)
    assert result.text and text.startswith(result.text) and len(result.text) < len(text)


async def test_a_tool_reply_over_the_size_cap_says_its_output_was_truncated(
    broker: InProcessBroker,
) -> None:
    inbox = Inbox()
    replies = await reply_set(broker.connect(), inbox)
    output = "line\n" * 2000
    ran = ExecResult(command="stream ls", exit_code=0)

    await replies.send(lambda header: ToolReply(**header, output=output, exec=ran))

    [reply] = await inbox.take(1)
    assert isinstance(reply, ToolReply)
    assert output.startswith(reply.output) and len(reply.output) < len(output)
    assert reply.exec is not None and reply.exec.truncated


def test_a_tool_call_over_the_size_cap_carries_the_start_of_its_arguments_as_text() -> None:
    arguments = {"stream": "ORDERS", "subjects": ["orders." + "x" * 64] * 20_000}
    request = new_request(RequestPrompt, sender=CALLER, prompt="hi")
    header = reply_header(request, sender=AGENT, sequence=2)
    block = ToolCallBody(id="tu_1", name="stream_add", input=arguments, argv=("stream", "add"))
    call = EventToolCall(**header, block=block)

    sent = decode(encode_fitting(call), direction=Direction.TO_CALLER)

    assert isinstance(sent, EventToolCall)
    assert (sent.block.id, sent.block.name, sent.block.argv) == ("tu_1", "stream_add", ())
    cut = sent.block.input["truncated_input"]
    assert json.dumps(arguments).startswith(cut) and 0 < len(cut) < len(json.dumps(arguments))
