"""`fisk serve` stopped while its NATS server is down: one sentence and the documented exit, no
traceback (issue 16, item 6)."""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass
from typing import cast

import pytest

from fisk_ai.a2a.errors import TransportClosed
from fisk_ai.a2a.nats import NatsTransport, ServiceEndpoint
from fisk_ai.broker.server import EmbeddedBroker
from fisk_ai.errors import FiskError
from fisk_ai.serve.draining import ServedEndpoints, serve_until_stopped


@dataclass
class SteadyTransport:
    fault: asyncio.Future[str] | None = None


@dataclass
class Unreachable:
    """An endpoint whose server went away: leaving fails as a dead socket does."""

    identity: str = "ops"
    drained: bool = False

    async def drain(self) -> None:
        raise ConnectionResetError(104, "Connection reset by peer")

    async def close(self) -> None:
        pass

    async def wait_idle(self) -> None:
        pass


@dataclass
class Leaves:
    identity: str = "ops"
    drained: bool = False

    async def drain(self) -> None:
        self.drained = True

    async def close(self) -> None:
        pass


async def test_sigterm_while_the_server_is_down_is_one_sentence() -> None:
    later = Leaves()
    endpoints = ServedEndpoints("ops", prompts=Unreachable(), tools=later)

    def interrupt() -> None:
        os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(FiskError) as raised:
        await serve_until_stopped(
            endpoints, cast(NatsTransport, SteadyTransport()), announce=interrupt
        )
    message = str(raised.value)
    assert "\n" not in message
    assert "could not reach the NATS server (ConnectionResetError" in message
    assert later.drained


async def test_a_service_on_a_dead_server_stops_with_an_a2a_error_and_closes_quietly() -> None:
    broker = EmbeddedBroker()
    await broker.__aenter__()
    client = await broker.connect(name="server")
    transport = NatsTransport(client)

    async def handler(delivery: object) -> None:
        pass

    service = await transport.serve_service(
        "ops", [ServiceEndpoint("tool", "choria.fisk-ai.test.ops", handler)]
    )
    await broker.__aexit__(None, None, None)
    try:
        await service.stop()
    except TransportClosed as error:
        assert "could not be told" in str(error)
    assert service.stopped
    await transport.close()
    await client.close()
