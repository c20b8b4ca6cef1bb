"""The memory a host opens once from agent.yaml, and how the banner names it."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from fisk_ai import config
from fisk_ai.broker.server import EmbeddedBroker
from fisk_ai.memory import MemoryStoreError
from fisk_ai.memory.file import FileMemoryStore
from fisk_ai.memory.jetstream import JetStreamMemoryStore
from fisk_ai.serve.memory import memory_location, open_memory, unopened_memory
from tests.memory.conftest import bucket_config, needs_server


def agent_config(memory: str, *, top: str = "") -> config.Config:
    return config.parse(
        f"identity: ops\n{top}system_prompt: p\nllm:\n  model: m\nharness:\n  memory:\n{memory}",
        config.Mode.AGENT,
    )


async def test_memory_off_opens_nothing() -> None:
    async with open_memory(agent_config("    enabled: false\n")) as memory:
        assert memory is None


async def test_the_file_backend_resolves_the_default_directory_against_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    async with open_memory(agent_config("    enabled: true\n    no_index: true\n")) as memory:
        assert memory is not None and memory.index is False
        store = memory.store
        assert isinstance(store, FileMemoryStore)
        assert store.directory == Path("memory/ops")
        await store.create("k", "d", "c")

    assert stat.S_IMODE((tmp_path / "memory" / "ops").stat().st_mode) == 0o700


async def test_a_symlinked_memory_directory_fails_at_startup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "ops").symlink_to(tmp_path / "elsewhere")

    with pytest.raises(MemoryStoreError, match=r"harness\.memory\.options\.directory"):
        async with open_memory(agent_config("    enabled: true\n")):
            pass


def context_home(tmp_path: Path, broker: EmbeddedBroker, monkeypatch: pytest.MonkeyPatch) -> None:
    contexts = tmp_path / "nats" / "context"
    contexts.mkdir(parents=True)
    (contexts / "prod.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))


JETSTREAM = "    enabled: true\n    backend: jetstream\n    options:\n      bucket: agent-memory\n"


@needs_server
async def test_the_jetstream_backend_binds_through_the_nats_context(
    tmp_path: Path, broker: EmbeddedBroker, bucket: NatsClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    context_home(tmp_path, broker, monkeypatch)
    cfg = agent_config(
        JETSTREAM + "      no_require_read_before_update: true\n", top="nats_context: prod\n"
    )

    async with open_memory(cfg) as memory:
        assert memory is not None
        store = memory.store
        assert isinstance(store, JetStreamMemoryStore)
        assert store.prefix == "ops"
        await store.create("k", "d", "c")
        # The guard is off: an overwrite needs no read.
        await store.update("k", "d", "blind", None)

    kv = await bucket.jetstream().key_value("agent-memory")
    assert await kv.keys() == ["ops.k"]


@needs_server
async def test_an_explicit_empty_prefix_is_flat(
    tmp_path: Path, broker: EmbeddedBroker, bucket: NatsClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    context_home(tmp_path, broker, monkeypatch)
    cfg = agent_config(JETSTREAM + '      prefix: ""\n', top="nats_context: prod\n")

    async with open_memory(cfg) as memory:
        assert memory is not None
        assert isinstance(memory.store, JetStreamMemoryStore) and memory.store.prefix == ""


@needs_server
async def test_a_missing_bucket_fails_before_any_run(
    tmp_path: Path, broker: EmbeddedBroker, client: NatsClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    context_home(tmp_path, broker, monkeypatch)

    with pytest.raises(MemoryStoreError) as refused:
        async with open_memory(agent_config(JETSTREAM, top="nats_context: prod\n")):
            pass

    assert "nats --context prod kv add agent-memory --history=1 --max-value-size=69600" in str(
        refused.value
    )


@needs_server
async def test_a_bucket_with_a_ttl_fails_before_any_run(
    tmp_path: Path, broker: EmbeddedBroker, client: NatsClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    context_home(tmp_path, broker, monkeypatch)
    await client.jetstream().create_key_value(bucket_config(ttl=60))

    with pytest.raises(MemoryStoreError, match="expires values after 60 s"):
        async with open_memory(agent_config(JETSTREAM, top="nats_context: prod\n")):
            pass


def test_the_banner_names_the_backend_and_where() -> None:
    assert memory_location(agent_config("    enabled: false\n")) == "disabled"
    assert memory_location(agent_config("    enabled: true\n")) == "file (memory/ops)"
    assert memory_location(agent_config("    enabled: true\n    read_only: true\n")) == (
        "file (memory/ops, read-only)"
    )
    assert memory_location(agent_config(JETSTREAM, top="nats_context: prod\n")) == (
        "jetstream (agent-memory, prefix ops)"
    )
    flat = agent_config(JETSTREAM + '      prefix: ""\n', top="nats_context: prod\n")
    assert memory_location(flat) == "jetstream (agent-memory, flat)"


async def test_info_lists_the_tools_without_opening_the_store() -> None:
    store = unopened_memory(agent_config("    enabled: true\n"))
    assert store is not None and store.info().backend == "file"
    with pytest.raises(MemoryStoreError, match="not opened"):
        await store.list()
    assert unopened_memory(agent_config("    enabled: false\n")) is None


async def test_a_written_directory_is_where_the_file_backend_keeps_the_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = agent_config("    enabled: true\n    options:\n      directory: shared/notes\n")

    async with open_memory(cfg) as memory:
        assert memory is not None
        await memory.store.create("build.notes", "how to build", "make fleet")

    assert list((tmp_path / "shared" / "notes").iterdir())
    assert not (tmp_path / "memory").exists()
    assert memory_location(cfg) == "file (shared/notes)"
