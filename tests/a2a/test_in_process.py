from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import (
    InvalidMessage,
    NoResponders,
    RemoteServiceError,
    RequestTimeout,
    TransportClosed,
)
from fisk_ai.a2a.in_process import InProcessBroker, InProcessTransport
from fisk_ai.a2a.messages import Identity, ToolReply, ToolRequest, new_request, reply_to
from fisk_ai.a2a.transport import Delivery, Handler, service_error_headers, tool_subject
from fisk_ai.a2a.vocabulary import Direction

SUBJECT = "choria.fisk-ai.tool.w"
WAIT = timedelta(seconds=5)


@pytest.fixture
async def broker() -> AsyncIterator[InProcessBroker]:
    broker = InProcessBroker()
    yield broker
    await broker.close()


def _collector() -> tuple[asyncio.Queue[Delivery], Handler]:
    received: asyncio.Queue[Delivery] = asyncio.Queue()

    async def collect(delivery: Delivery) -> None:
        received.put_nowait(delivery)

    return received, collect


async def _echo_server(
    transport: InProcessTransport, subject: str = SUBJECT, queue: str = ""
) -> None:
    async def echo(delivery: Delivery) -> None:
        await transport.publish(delivery.reply, b"echo:" + delivery.data)

    await transport.subscribe(subject, echo, queue=queue)


async def test_a_request_gets_the_reply_its_receiver_publishes(broker: InProcessBroker) -> None:
    await _echo_server(broker.connect())

    reply = await broker.connect().request(SUBJECT, b"ping", timeout=WAIT)

    assert reply == b"echo:ping"


async def test_a_tool_call_round_trips_as_encoded_messages(broker: InProcessBroker) -> None:
    agent, caller = Identity(name="w"), Identity(name="peer")
    server = broker.connect()

    async def serve(delivery: Delivery) -> None:
        request = decode(delivery.data, direction=Direction.TO_AGENT)
        assert isinstance(request, ToolRequest)
        answer = reply_to(request, ToolReply, sender=agent, output=f"ran {request.name}")
        await server.publish(delivery.reply, encode(answer))

    await server.subscribe(tool_subject("w"), serve, queue="w")
    call = new_request(ToolRequest, sender=caller, recipient=agent, name="stream_ls")

    data = await broker.connect().request(tool_subject("w"), encode(call), timeout=WAIT)

    reply = decode(data, direction=Direction.TO_CALLER)
    assert isinstance(reply, ToolReply)
    assert reply.output == "ran stream_ls"
    assert reply.request == call.request


async def test_a_queue_group_hands_each_message_to_one_member(broker: InProcessBroker) -> None:
    received: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    server = broker.connect()
    for member in ("a", "b"):

        async def take(delivery: Delivery, member: str = member) -> None:
            received.put_nowait((member, delivery.data))

        await server.subscribe(SUBJECT, take, queue="w")
    publisher = broker.connect()

    for number in range(4):
        await publisher.publish(SUBJECT, str(number).encode())
    taken = [await received.get() for _ in range(4)]

    assert sorted(data for _, data in taken) == [b"0", b"1", b"2", b"3"]
    assert {member for member, _ in taken} == {"a", "b"}
    assert received.empty()


async def test_subscribers_outside_a_group_each_get_every_message(broker: InProcessBroker) -> None:
    first, collect_first = _collector()
    second, collect_second = _collector()
    grouped, collect_grouped = _collector()
    server = broker.connect()
    await server.subscribe(SUBJECT, collect_first)
    await server.subscribe(SUBJECT, collect_second)
    await server.subscribe(SUBJECT, collect_grouped, queue="w")

    await broker.connect().publish(SUBJECT, b"hello")

    assert (await first.get()).data == b"hello"
    assert (await second.get()).data == b"hello"
    assert (await grouped.get()).data == b"hello"


async def test_a_request_to_nobody_is_refused_as_no_responders(broker: InProcessBroker) -> None:
    with pytest.raises(NoResponders) as caught:
        await broker.connect().request(SUBJECT, b"ping", timeout=WAIT)

    assert caught.value.service_code == 503
    assert SUBJECT in str(caught.value)


async def test_a_publish_to_nobody_brings_an_empty_503_to_the_inbox(
    broker: InProcessBroker,
) -> None:
    caller = broker.connect()
    inbox = caller.new_inbox()
    received, collect = _collector()
    await caller.subscribe(inbox, collect)

    await caller.publish("choria.fisk-ai.task.ghost", b"{}", reply=inbox)

    delivery = await received.get()
    assert delivery.no_responders
    assert delivery.data == b""


async def test_a_service_error_reply_is_raised_with_its_code(broker: InProcessBroker) -> None:
    server = broker.connect()

    async def refuse(delivery: Delivery) -> None:
        refusal = InvalidMessage("the message is not valid JSON")
        await server.publish(delivery.reply, b"", headers=service_error_headers(refusal))

    await server.subscribe(SUBJECT, refuse)

    with pytest.raises(RemoteServiceError) as caught:
        await broker.connect().request(SUBJECT, b"{", timeout=WAIT)

    assert caught.value.service_code == 400
    assert caught.value.description == "the message is not valid JSON"


async def test_a_request_nobody_answers_times_out(broker: InProcessBroker) -> None:
    heard, collect = _collector()
    await broker.connect().subscribe(SUBJECT, collect)

    with pytest.raises(RequestTimeout):
        await broker.connect().request(SUBJECT, b"ping", timeout=timedelta(milliseconds=10))

    assert (await heard.get()).data == b"ping"


@pytest.mark.parametrize(
    ("pattern", "subject", "matches"),
    [
        ("choria.fisk-ai.cancel.w.*", "choria.fisk-ai.cancel.w.docs1", True),
        ("choria.fisk-ai.cancel.*", "choria.fisk-ai.cancel.w.docs1", False),
        ("choria.fisk-ai.>", "choria.fisk-ai.cancel.w.docs1", True),
        ("choria.fisk-ai.cancel.w.>", "choria.fisk-ai.cancel.w", False),
        ("choria.fisk-ai.tool.w", "choria.fisk-ai.tool.w2", False),
    ],
)
async def test_wildcard_subscriptions_match_as_nats_does(
    broker: InProcessBroker, pattern: str, subject: str, matches: bool
) -> None:
    await _echo_server(broker.connect(), subject=pattern)

    if matches:
        assert await broker.connect().request(subject, b"x", timeout=WAIT) == b"echo:x"
    else:
        with pytest.raises(NoResponders):
            await broker.connect().request(subject, b"x", timeout=WAIT)


async def test_after_unsubscribing_nothing_is_delivered(broker: InProcessBroker) -> None:
    server = broker.connect()

    async def echo(delivery: Delivery) -> None:
        await server.publish(delivery.reply, delivery.data)

    subscription = await server.subscribe(SUBJECT, echo)
    await subscription.unsubscribe()

    with pytest.raises(NoResponders):
        await broker.connect().request(SUBJECT, b"x", timeout=WAIT)


async def test_a_subscription_handles_one_message_at_a_time(broker: InProcessBroker) -> None:
    steps: list[str] = []
    first_started = asyncio.Event()
    release = asyncio.Event()
    done = asyncio.Event()

    async def slow(delivery: Delivery) -> None:
        steps.append(f"start {delivery.data.decode()}")
        if delivery.data == b"1":
            first_started.set()
            await release.wait()
        steps.append(f"end {delivery.data.decode()}")
        if delivery.data == b"2":
            done.set()

    await broker.connect().subscribe(SUBJECT, slow)
    publisher = broker.connect()
    await publisher.publish(SUBJECT, b"1")
    await publisher.publish(SUBJECT, b"2")
    await first_started.wait()

    assert steps == ["start 1"]
    release.set()
    await done.wait()
    assert steps == ["start 1", "end 1", "start 2", "end 2"]


async def test_a_failing_handler_leaves_its_subscription_running(
    broker: InProcessBroker, caplog: pytest.LogCaptureFixture
) -> None:
    server = broker.connect()

    async def fragile(delivery: Delivery) -> None:
        if delivery.data == b"boom":
            raise RuntimeError("handler bug")
        await server.publish(delivery.reply, b"fine")

    await server.subscribe(SUBJECT, fragile)
    caller = broker.connect()
    await caller.publish(SUBJECT, b"boom")

    with caplog.at_level(logging.ERROR):
        assert await caller.request(SUBJECT, b"ok", timeout=WAIT) == b"fine"

    assert "handler bug" in caplog.text


async def test_closing_a_connection_ends_its_subscriptions(broker: InProcessBroker) -> None:
    server = broker.connect()
    await _echo_server(server)

    await server.close()

    with pytest.raises(NoResponders):
        await broker.connect().request(SUBJECT, b"x", timeout=WAIT)


async def test_a_closed_connection_refuses_to_be_used(broker: InProcessBroker) -> None:
    transport = broker.connect()
    await transport.close()

    with pytest.raises(TransportClosed):
        await transport.publish(SUBJECT, b"x")


async def test_closing_abandons_a_handler_still_running(broker: InProcessBroker) -> None:
    started = asyncio.Event()
    finished: list[bool] = []

    async def stuck(delivery: Delivery) -> None:
        started.set()
        await asyncio.Event().wait()
        finished.append(True)

    server = broker.connect()
    await server.subscribe(SUBJECT, stuck)
    await broker.connect().publish(SUBJECT, b"x")
    await started.wait()

    await server.close()

    assert finished == []


async def test_each_inbox_is_new(broker: InProcessBroker) -> None:
    transport = broker.connect()

    assert transport.new_inbox() != transport.new_inbox()


async def test_closing_the_broker_closes_every_connection(broker: InProcessBroker) -> None:
    server = broker.connect()
    await _echo_server(server)

    await broker.close()

    with pytest.raises(TransportClosed):
        await server.publish(SUBJECT, b"x")
