"""The jetstream memory backend against a real nats-server: the shared contract, binding and
its startup refusals, prefixes, and read-before-update."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from fisk_ai.memory import (
    MAX_ENTRY_BYTES,
    MemoryStale,
    MemoryStore,
    MemoryStoreError,
    Scope,
    lookup_backend,
    serialize,
)
from fisk_ai.memory.file import FileMemoryStore
from fisk_ai.memory.jetstream import JetStreamMemoryStore, kv_add_command
from tests.memory.conftest import BUCKET, bucket_config, jetstream_store, needs_server
from tests.memory.contract import MakeStore, MemoryStoreContract

pytestmark = needs_server

FIX = "nats --context prod kv add agent-memory --history=1 --max-value-size=69600"


class TestJetStreamStoreContract(MemoryStoreContract):
    @pytest.fixture
    def make_store(self, bucket: NatsClient) -> MakeStore:
        async def make() -> MemoryStore:
            return jetstream_store(bucket)

        return make


def assert_one_sentence(text: str) -> None:
    assert "\n" not in text and "Traceback" not in text


async def stored_keys(client: NatsClient) -> list[str]:
    kv = await client.jetstream().key_value(BUCKET)
    return sorted(await kv.keys())


# Binding, and refusing a bucket that would lose memories.


def test_the_fix_is_the_user_guides_command() -> None:
    assert MAX_ENTRY_BYTES == 69600
    assert kv_add_command("agent-memory", "prod") == FIX


async def test_a_missing_bucket_fails_with_the_command_that_makes_it(client: NatsClient) -> None:
    store = jetstream_store(client)

    with pytest.raises(MemoryStoreError) as refused:
        await store.bind()

    message = str(refused.value)
    assert_one_sentence(message)
    assert message.startswith("memory bucket agent-memory does not exist")
    assert FIX in message and "harness.memory.options.bucket" in message


async def test_the_store_never_creates_the_bucket(client: NatsClient) -> None:
    store = jetstream_store(client)
    with pytest.raises(MemoryStoreError):
        await store.create("k", "d", "c")

    streams = await client.jetstream().streams_info()
    assert streams == []


async def test_a_bucket_with_a_ttl_is_refused(client: NatsClient) -> None:
    await client.jetstream().create_key_value(bucket_config(ttl=3600))

    with pytest.raises(MemoryStoreError) as refused:
        await jetstream_store(client).bind()

    message = str(refused.value)
    assert_one_sentence(message)
    assert "expires values after 3600 s" in message
    assert FIX in message and "harness.memory.options.bucket" in message


async def test_a_bucket_capping_values_below_a_full_entry_is_refused(client: NatsClient) -> None:
    await client.jetstream().create_key_value(bucket_config(max_value_size=65536))

    with pytest.raises(MemoryStoreError) as refused:
        await jetstream_store(client).bind()

    message = str(refused.value)
    assert_one_sentence(message)
    assert "caps a value at 65536 bytes, below the 69600 a full memory needs" in message
    assert FIX in message


async def test_a_bucket_without_a_value_cap_binds(client: NatsClient) -> None:
    await client.jetstream().create_key_value(bucket_config(max_value_size=-1))

    shape = await jetstream_store(client).bind()

    assert shape.max_value_size == 0


class _SilentJetStream:
    async def key_value(self, bucket: str) -> None:
        await asyncio.Event().wait()


class _SilentConnection:
    """A connection whose JetStream never answers."""

    def jetstream(self, **options: str) -> _SilentJetStream:
        return _SilentJetStream()


async def test_a_bind_that_gets_no_answer_times_out_naming_the_key() -> None:
    store = JetStreamMemoryStore(
        BUCKET,
        connection=_SilentConnection(),  # type: ignore[arg-type]
        prefix="ops",
        bind_timeout=0.05,
    )

    with pytest.raises(MemoryStoreError) as refused:
        await store.bind()

    message = str(refused.value)
    assert_one_sentence(message)
    assert message.startswith("memory bucket agent-memory could not be bound within 0.05 s")
    assert "harness.memory.options.bucket" in message


async def test_a_closed_connection_fails_the_bind_in_a_sentence(client: NatsClient) -> None:
    await client.close()

    with pytest.raises(MemoryStoreError) as refused:
        await jetstream_store(client).bind()

    assert str(refused.value).startswith("memory bucket agent-memory could not be described")


# Where keys live.


async def test_keys_are_stored_under_the_prefix(bucket: NatsClient) -> None:
    await jetstream_store(bucket, prefix="ops").create("build.notes", "d", "c")

    assert await stored_keys(bucket) == ["ops.build.notes"]


async def test_an_empty_prefix_is_a_flat_keyspace(bucket: NatsClient) -> None:
    await jetstream_store(bucket, prefix="").create("build.notes", "d", "c")

    assert await stored_keys(bucket) == ["build.notes"]


async def test_agents_with_different_prefixes_do_not_see_each_other(bucket: NatsClient) -> None:
    ops, web = jetstream_store(bucket, prefix="ops"), jetstream_store(bucket, prefix="web")
    await ops.create("shared", "from ops", "1")

    assert await web.list() == []
    assert await web.read("shared") is None
    await web.create("shared", "from web", "2")
    memory = await ops.read("shared")
    assert memory is not None and memory.description == "from ops"


async def test_agents_with_one_prefix_share_memory(bucket: NatsClient) -> None:
    first = jetstream_store(bucket, prefix="fleet-shared")
    second = jetstream_store(bucket, prefix="fleet-shared")
    await first.create("k", "d", "from the first")

    memory = await second.read("k")

    assert memory is not None and memory.content == "from the first"


async def test_an_invalid_prefix_is_refused_naming_the_key(bucket: NatsClient) -> None:
    with pytest.raises(MemoryStoreError, match=r"harness.memory.options.prefix"):
        jetstream_store(bucket, prefix="bad prefix")


async def test_a_value_is_the_file_backends_bytes(bucket: NatsClient, tmp_path: Path) -> None:
    await jetstream_store(bucket, prefix="").create("k", "Notes: the build", "body\n")
    await FileMemoryStore(tmp_path).create("k", "Notes: the build", "body\n")

    kv = await bucket.jetstream().key_value(BUCKET)
    entry = await kv.get("k")
    assert entry.value == (tmp_path / "k.md").read_bytes()
    assert entry.value == serialize("Notes: the build", "body\n")


async def test_info_names_the_bucket_and_prefix(bucket: NatsClient) -> None:
    assert jetstream_store(bucket, prefix="ops").info().location == "agent-memory, prefix ops"
    assert jetstream_store(bucket, prefix="").info().location == "agent-memory"


# Read-before-update.


async def test_an_overwrite_of_an_unread_memory_is_stale(bucket: NatsClient) -> None:
    writer, other = jetstream_store(bucket), jetstream_store(bucket)
    await writer.create("k", "d", "original")

    with pytest.raises(MemoryStale, match="not read"):
        await other.update("k", "d", "clobbered", Scope())
    with pytest.raises(MemoryStale):
        await other.update("k", "d", "clobbered", None)

    memory = await other.read("k")
    assert memory is not None and memory.content == "original"


async def test_seeing_a_key_in_the_list_authorizes_nothing(bucket: NatsClient) -> None:
    store = jetstream_store(bucket)
    await store.create("k", "d", "original")
    scope = Scope()
    await store.list()

    with pytest.raises(MemoryStale):
        await store.update("k", "d", "changed", scope)


async def test_an_overwrite_of_a_memory_changed_since_it_was_read_is_stale(
    bucket: NatsClient,
) -> None:
    mine, theirs = jetstream_store(bucket), jetstream_store(bucket)
    await mine.create("k", "d", "v1")
    my_scope, their_scope = Scope(), Scope()
    await mine.read("k", my_scope)
    await theirs.read("k", their_scope)
    await theirs.update("k", "d", "their change", their_scope)

    with pytest.raises(MemoryStale, match="changed since"):
        await mine.update("k", "d", "my change", my_scope)

    # Reading again brings the scope up to date, and the retry goes through.
    await mine.read("k", my_scope)
    await mine.update("k", "d", "my change", my_scope)
    memory = await theirs.read("k")
    assert memory is not None and memory.content == "my change"


async def test_a_delete_forgets_the_revision(bucket: NatsClient) -> None:
    store = jetstream_store(bucket)
    scope = Scope()
    await store.create("k", "d", "v1", scope)
    await store.delete("k", scope)
    await jetstream_store(bucket).create("k", "d", "somebody else's")

    with pytest.raises(MemoryStale):
        await store.update("k", "d", "mine", scope)


async def test_a_scope_restored_from_revisions_authorizes_the_overwrite(
    bucket: NatsClient,
) -> None:
    store = jetstream_store(bucket)
    first = Scope()
    await store.create("k", "d", "v1")
    await store.read("k", first)

    resumed = Scope(first.snapshot())
    await store.update("k", "d", "v2", resumed)

    memory = await store.read("k")
    assert memory is not None and memory.content == "v2"


async def test_without_the_guard_an_overwrite_is_blind(bucket: NatsClient) -> None:
    await jetstream_store(bucket).create("k", "d", "original")
    blind = jetstream_store(bucket, require_read_before_update=False)

    await blind.update("k", "d", "overwritten", None)
    await blind.update("new", "d", "added", None)

    assert (await blind.read("k")) is not None
    assert [item.key for item in await blind.list()] == ["k", "new"]


def test_the_registry_resolves_the_jetstream_backend(client: NatsClient) -> None:
    store = lookup_backend("jetstream")(bucket=BUCKET, connection=client, prefix="ops")
    assert isinstance(store, JetStreamMemoryStore) and store.prefix == "ops"
