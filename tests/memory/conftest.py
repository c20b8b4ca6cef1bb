"""Shared pieces of the memory tests: the embedded broker with JetStream, and the bucket an
operator would make for the jetstream backend."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from nats.aio.client import Client as NatsClient
from nats.js.api import KeyValueConfig

from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.memory import MAX_ENTRY_BYTES, MemoryStore
from fisk_ai.memory.jetstream import JetStreamMemoryStore

BUCKET = "agent-memory"
NO_SERVER = locate_server_binary() is None
needs_server = pytest.mark.skipif(NO_SERVER, reason="no nats-server binary on this machine")

MakeStore = Callable[..., Awaitable[MemoryStore]]


def bucket_config(**changes: Any) -> KeyValueConfig:
    """The bucket the user guide's `nats kv add` makes, with ``changes`` applied."""
    settings: dict[str, Any] = {"bucket": BUCKET, "history": 1, "max_value_size": MAX_ENTRY_BYTES}
    settings.update(changes)
    return KeyValueConfig(**settings)


@pytest.fixture
async def broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker(jetstream=True) as running:
        yield running


@pytest.fixture
async def client(broker: EmbeddedBroker) -> AsyncIterator[NatsClient]:
    connection = await broker.connect(name="test")
    yield connection
    await connection.close()


@pytest.fixture
async def bucket(client: NatsClient) -> NatsClient:
    """``client`` with the memory bucket made, as an operator would."""
    await client.jetstream().create_key_value(bucket_config())
    return client


def jetstream_store(client: NatsClient, **options: Any) -> JetStreamMemoryStore:
    settings: dict[str, Any] = {"connection": client, "prefix": "ops", "context_name": "prod"}
    settings.update(options)
    return JetStreamMemoryStore(BUCKET, **settings)
