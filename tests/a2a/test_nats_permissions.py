"""A subscription the NATS server refuses while a transport serves is the transport's fault, so
the worker drains and exits non-zero; a refused publish loses one message and is not. Against a
real nats-server whose user may not subscribe to, nor publish on, ``choria.fisk-ai.denied.>``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.transport import Delivery
from fisk_ai.broker.server import locate_server_binary
from tests.fakes.nats_server import configured_server
from tests.patience import DEADLINE

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)

DENIED = "choria.fisk-ai.denied.tool"
CONFIG = {
    "host": "127.0.0.1",
    "port": -1,
    "logtime": False,
    "authorization": {
        "users": [
            {
                "user": "agent",
                "password": "agent-secret",
                "permissions": {
                    "publish": {"deny": ["choria.fisk-ai.denied.>"]},
                    "subscribe": {"deny": ["choria.fisk-ai.denied.>"]},
                },
            }
        ]
    },
}


@pytest.fixture
async def transport(tmp_path: Path) -> AsyncIterator[NatsTransport]:
    async with configured_server(tmp_path, CONFIG) as server:
        opened = await NatsTransport.open(
            {
                "servers": [server.url],
                "user": "agent",
                "password": "agent-secret",
                "allow_reconnect": False,
            },
            name="fisk-ai test",
        )
        try:
            yield opened
        finally:
            await opened.close()


async def ignore(delivery: Delivery) -> None:
    pass


async def test_a_refused_subscription_is_the_transports_fault(transport: NatsTransport) -> None:
    assert transport.fault is not None

    await transport.subscribe(DENIED, ignore)

    reason = await asyncio.wait_for(transport.fault, DEADLINE)
    assert reason.startswith("the NATS server refused a subscription (")
    assert DENIED in reason


async def test_a_refused_publish_is_no_fault(transport: NatsTransport) -> None:
    assert transport.fault is not None

    await transport.publish(DENIED, b"lost")
    # The server answers the publish before the flush's ping, so its refusal has arrived.
    await transport.client.flush()

    assert not transport.fault.done()
