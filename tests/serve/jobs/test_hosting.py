"""Starting the jobs channel as `fisk serve` does, against a real nats-server: what cannot work
fails the start with one sentence naming what to change, before any job is taken."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai import config
from fisk_ai.agent.resources import Resources
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.errors import FiskError
from fisk_ai.serve.jobs.hosting import take_jobs
from fisk_ai.sessions import FileSessionStore, JetStreamSessionStore
from tests.agent.conftest import SETTINGS, toolset
from tests.fakes.provider import ScriptedProvider
from tests.serve.jobs.queue_setup import make_storage
from tests.sessions.session_stream import STREAM

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)


def jobs_config(jobs: str = "{}") -> config.Config:
    return config.parse(
        "identity: worker\nsystem_prompt: You count.\nllm: {model: m}\nnats_context: stock\n"
        f"expose:\n  agent:\n    jobs: {jobs}\n",
        config.Mode.SERVE,
    )


@pytest.fixture
async def broker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[EmbeddedBroker]:
    """A JetStream server with the queue's storage, as the NATS context ``stock``."""
    async with EmbeddedBroker(jetstream=True) as running:
        contexts = tmp_path / "nats" / "context"
        contexts.mkdir(parents=True)
        (contexts / "stock.json").write_text(
            json.dumps({"url": running.url, "token": running.token})
        )
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
        client = await running.connect(name="ajc")
        try:
            await make_storage(client)
        finally:
            await client.close()
        yield running


def assert_one_sentence(text: str) -> None:
    assert "\n" not in text and "Traceback" not in text, text
    assert text.count(". ") == 0, text


async def test_a_missing_sessions_stream_fails_the_start_with_the_command_that_makes_it(
    broker: EmbeddedBroker,
) -> None:
    client = await broker.connect(name="worker sessions")
    try:
        store = JetStreamSessionStore(STREAM, connection=client, context_name="stock")
        resources = Resources(SETTINGS, ScriptedProvider(), toolset(), store)
        with pytest.raises(FiskError) as refused:
            async with take_jobs(jobs_config(), resources, workers=None):
                pytest.fail("the channel started without a sessions stream")
    finally:
        await client.close()

    message = str(refused.value)
    assert message.startswith(f"harness.sessions cannot be used: stream {STREAM} does not exist")
    assert f"nats --context stock stream add {STREAM}" in message
    assert_one_sentence(message)


async def test_a_queue_name_asyncjobs_refuses_is_one_sentence_naming_the_key(
    broker: EmbeddedBroker, tmp_path: Path
) -> None:
    resources = Resources(SETTINGS, ScriptedProvider(), toolset(), FileSessionStore(tmp_path))
    with pytest.raises(FiskError) as refused:
        async with take_jobs(jobs_config('{queue: "no such.queue"}'), resources, workers=None):
            pytest.fail("the channel started on a queue name asyncjobs refuses")

    message = str(refused.value)
    assert message.startswith("expose.agent.jobs.queue 'no such.queue' is not a queue name")
    assert_one_sentence(message)
