"""A subscription the NATS server refuses while a transport serves is the transport's fault, so
the worker drains and exits non-zero; a refused publish loses one message and is not. Against a
real nats-server whose user may not subscribe to, nor publish on, ``choria.fisk-ai.denied.>``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.transport import Delivery
from fisk_ai.broker.server import locate_server_binary
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
WAIT = DEADLINE


@pytest.fixture
async def transport(tmp_path: Path) -> AsyncIterator[NatsTransport]:
    config = tmp_path / "server.conf"
    config.write_text(json.dumps(CONFIG))
    binary = locate_server_binary()
    assert binary is not None
    process = await asyncio.create_subprocess_exec(
        binary,
        "--config",
        str(config),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    url = ""
    async with asyncio.timeout(WAIT):
        while True:
            line = (await process.stderr.readline()).decode()
            assert line, "nats-server ended before it was ready"
            if "Listening for client connections on " in line:
                url = "nats://" + line.rsplit(" ", 1)[-1].strip()
            if "Server is ready" in line:
                break
    drain = asyncio.create_task(process.stderr.read())
    opened = await NatsTransport.open(
        {"servers": [url], "user": "agent", "password": "agent-secret", "allow_reconnect": False},
        name="fisk-ai test",
    )
    try:
        yield opened
    finally:
        await opened.close()
        process.terminate()
        await process.wait()
        await drain


async def ignore(delivery: Delivery) -> None:
    pass


async def test_a_refused_subscription_is_the_transports_fault(transport: NatsTransport) -> None:
    assert transport.fault is not None

    await transport.subscribe(DENIED, ignore)

    reason = await asyncio.wait_for(transport.fault, WAIT)
    assert reason.startswith("the NATS server refused a subscription (")
    assert DENIED in reason


async def test_a_refused_publish_is_no_fault(transport: NatsTransport) -> None:
    assert transport.fault is not None

    await transport.publish(DENIED, b"lost")
    # The server answers the publish before the flush's ping, so its refusal has arrived.
    await transport.client.flush()

    assert not transport.fault.done()
