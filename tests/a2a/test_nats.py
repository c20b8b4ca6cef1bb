"""The a2a transport over a real nats-server: requests, replies, errors, the micro service."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from fisk_ai.a2a.errors import (
    InvalidMessage,
    NoResponders,
    RemoteServiceError,
    RequestTimeout,
    TransportClosed,
)
from fisk_ai.a2a.nats import NatsTransport, ServiceEndpoint
from fisk_ai.a2a.transport import Delivery, service_error_headers
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from tests.patience import DEADLINE

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)

SUBJECT = "choria.fisk-ai.tool.w"
WAIT = timedelta(seconds=5)


@pytest.fixture
async def broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker() as running:
        yield running


@pytest.fixture
async def pair(broker: EmbeddedBroker) -> AsyncIterator[tuple[NatsTransport, NatsTransport]]:
    server = NatsTransport(await broker.connect(name="server"))
    caller = NatsTransport(await broker.connect(name="caller"))
    yield server, caller
    for transport in (server, caller):
        await transport.close()
        await transport.client.close()


async def test_a_request_gets_the_reply_the_handler_publishes(
    pair: tuple[NatsTransport, NatsTransport],
) -> None:
    server, caller = pair

    async def echo(delivery: Delivery) -> None:
        await server.publish(delivery.reply, delivery.data.upper())

    await server.subscribe(SUBJECT, echo, queue="w")

    assert await caller.request(SUBJECT, b"ping", timeout=WAIT) == b"PING"


async def test_a_request_nobody_listens_for_raises_no_responders(
    pair: tuple[NatsTransport, NatsTransport],
) -> None:
    _, caller = pair

    with pytest.raises(NoResponders):
        await caller.request(SUBJECT, b"ping", timeout=WAIT)


async def test_a_request_nobody_answers_raises_request_timeout(
    pair: tuple[NatsTransport, NatsTransport],
) -> None:
    server, caller = pair

    async def ignore(delivery: Delivery) -> None:
        pass

    await server.subscribe(SUBJECT, ignore)

    with pytest.raises(RequestTimeout):
        await caller.request(SUBJECT, b"ping", timeout=timedelta(milliseconds=50))


async def test_a_service_error_reply_raises_with_the_peer_code_and_text(
    pair: tuple[NatsTransport, NatsTransport],
) -> None:
    server, caller = pair

    async def refuse(delivery: Delivery) -> None:
        headers = service_error_headers(InvalidMessage("the message is not valid JSON"))
        await server.publish(delivery.reply, b"", headers=headers)

    await server.subscribe(SUBJECT, refuse)

    with pytest.raises(RemoteServiceError) as raised:
        await caller.request(SUBJECT, b"ping", timeout=WAIT)
    assert raised.value.service_code == 400
    assert raised.value.description == "the message is not valid JSON"


async def test_a_reply_set_caller_learns_nobody_listens_from_its_inbox(
    pair: tuple[NatsTransport, NatsTransport],
) -> None:
    _, caller = pair
    arrived: asyncio.Queue[Delivery] = asyncio.Queue()

    async def keep(delivery: Delivery) -> None:
        arrived.put_nowait(delivery)

    inbox = await caller.subscribe(caller.new_inbox(), keep)
    await caller.publish(SUBJECT, b"ping", reply=inbox.subject)

    assert (await asyncio.wait_for(arrived.get(), 5)).no_responders


async def test_the_micro_service_is_named_for_the_identity_and_queues_on_it(
    pair: tuple[NatsTransport, NatsTransport],
) -> None:
    server, caller = pair

    async def ignore(delivery: Delivery) -> None:
        pass

    await server.serve_service(
        "docs1",
        [
            ServiceEndpoint("discovery", "choria.fisk-ai.discovery.docs1", ignore),
            ServiceEndpoint("tool", "choria.fisk-ai.tool.docs1", ignore),
        ],
    )
    info = json.loads(await caller.request("$SRV.INFO.docs1", b"", timeout=WAIT))

    assert info["name"] == "docs1"
    assert {(e["name"], e["subject"], e["queue_group"]) for e in info["endpoints"]} == {
        ("discovery", "choria.fisk-ai.discovery.docs1", "docs1"),
        ("tool", "choria.fisk-ai.tool.docs1", "docs1"),
    }


async def test_a_stopped_service_stops_answering(
    pair: tuple[NatsTransport, NatsTransport],
) -> None:
    server, caller = pair

    async def echo(delivery: Delivery) -> None:
        await server.publish(delivery.reply, delivery.data)

    service = await server.serve_service("docs1", [ServiceEndpoint("tool", SUBJECT, echo)])
    assert await caller.request(SUBJECT, b"ping", timeout=WAIT) == b"ping"

    await service.stop()

    assert service.stopped
    with pytest.raises(NoResponders):
        await caller.request(SUBJECT, b"ping", timeout=WAIT)


async def test_closing_a_borrowed_connection_leaves_it_open(broker: EmbeddedBroker) -> None:
    client = await broker.connect()
    transport = NatsTransport(client)

    await transport.close()

    assert client.is_connected
    with pytest.raises(TransportClosed):
        await transport.publish(SUBJECT, b"late")
    await client.close()


async def test_closing_an_opened_connection_closes_it_without_a_fault(
    broker: EmbeddedBroker,
) -> None:
    transport = await NatsTransport.open(
        {"servers": [broker.url], "token": broker.token}, name="fisk-ai test"
    )

    await transport.close()

    assert transport.client.is_closed
    assert transport.fault is not None and transport.fault.cancelled()


async def test_losing_an_opened_connection_is_reported_as_a_fault(
    broker: EmbeddedBroker,
) -> None:
    transport = await NatsTransport.open(
        {"servers": [broker.url], "token": broker.token, "allow_reconnect": False},
        name="fisk-ai test",
    )
    assert transport.fault is not None

    await transport.client.close()

    assert "closed" in await asyncio.wait_for(transport.fault, DEADLINE)


async def test_opening_a_connection_nobody_answers_fails_at_once() -> None:
    import socket

    # Bound but not listening: connecting is refused, and while the socket is held no other
    # process (another test worker) can take the port.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

        with pytest.raises(OSError):
            await asyncio.wait_for(
                NatsTransport.open({"servers": [f"nats://127.0.0.1:{port}"]}, name="fisk-ai test"),
                WAIT.total_seconds(),
            )
