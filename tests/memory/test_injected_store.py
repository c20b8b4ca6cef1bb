"""An embedder's own memory store, passed to the composition instead of the one agent.yaml
describes (architecture, "Failing at run start"): a backend named in harness.memory.backend
that the store does not report is refused naming both; naming none takes the store as it is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from fisk_ai import config
from fisk_ai.agent.application import ApplicationTools
from fisk_ai.agent.resources import Resources
from fisk_ai.memory import MemoryStoreError
from fisk_ai.serve.composition import Composition, compose_agent
from tests.fakes.memory import FakeMemoryStore
from tests.fakes.provider import ScriptedProvider

NO_APPLICATION = ApplicationTools(application=None, gates={}, warnings=())


def agent_config(memory: str) -> config.Config:
    return config.parse(
        f"identity: ops\nsystem_prompt: p\nllm:\n  model: m\nharness:\n  memory:\n{memory}",
        config.Mode.AGENT,
    )


@asynccontextmanager
async def composed(
    cfg: config.Config, store: FakeMemoryStore, state: Path
) -> AsyncIterator[Resources]:
    async with compose_agent(
        cfg,
        Composition(state_dir=str(state), memory_store=store),
        provider=ScriptedProvider([]),
        application_tools=NO_APPLICATION,
        warn=lambda _: None,
        note=lambda _: None,
    ) as resources:
        yield resources


async def test_a_store_of_another_backend_than_the_config_names_is_refused_naming_both(
    tmp_path: Path,
) -> None:
    cfg = agent_config("    enabled: true\n    backend: file\n")

    with pytest.raises(MemoryStoreError) as refused:
        async with composed(cfg, FakeMemoryStore(), tmp_path):
            pass

    assert str(refused.value) == (
        'harness.memory.backend is "file" but the memory store passed in is a "fake" store; '
        'set harness.memory.backend to "fake", or leave it out to take the store passed in'
    )


async def test_a_config_naming_no_backend_takes_the_store_passed_in(tmp_path: Path) -> None:
    store = FakeMemoryStore()
    await store.create("host", "which host we run on", "db1")

    async with composed(agent_config("    enabled: true\n"), store, tmp_path) as resources:
        assert resources.memory is not None
        assert resources.memory.store is store
        assert "memory_read" in (
            resources.tools() if callable(resources.tools) else resources.tools
        )


async def test_a_store_passed_in_with_memory_disabled_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MemoryStoreError, match=r"harness\.memory\.enabled is false"):
        async with composed(agent_config("    enabled: false\n"), FakeMemoryStore(), tmp_path):
            pass


async def test_a_store_passed_in_that_cannot_be_reached_fails_before_any_run(
    tmp_path: Path,
) -> None:
    store = FakeMemoryStore()
    store.failure = "the bucket is gone"

    with pytest.raises(MemoryStoreError, match="the bucket is gone"):
        async with composed(agent_config("    enabled: true\n"), store, tmp_path):
            pass
