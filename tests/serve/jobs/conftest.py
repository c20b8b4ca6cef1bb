"""The fixtures every queued-jobs test shares: a connection to a fresh broker with JetStream."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NatsClient

from fisk_ai.broker.server import EmbeddedBroker


@pytest.fixture
async def client() -> AsyncIterator[NatsClient]:
    async with EmbeddedBroker(jetstream=True) as broker:
        connection = await broker.connect(name="test")
        yield connection
        await connection.close()
