"""How a job's run ending lands on its task, against a real nats-server: a model that refused is
a failed run, stored as a v1 error message with stop reason refusal, never as a result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from fisk_ai.a2a.codec import decode
from fisk_ai.a2a.messages import TerminalError
from fisk_ai.a2a.vocabulary import Direction
from fisk_ai.agent.resources import Resources
from fisk_ai.broker.server import locate_server_binary
from fisk_ai.serve.jobs.channel import JobsChannel, JobsOptions
from fisk_ai.serve.jobs.wire import bind_queue, enqueue
from fisk_ai.serve.server import HostedChannels
from fisk_ai.sessions.file import FileSessionStore
from tests.agent.conftest import SETTINGS, toolset
from tests.fakes.provider import ScriptedProvider, answer
from tests.serve.jobs.queue_setup import QUEUE, REQUEST, make_storage
from tests.serve.jobs.states import watching

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)


async def test_a_model_refusal_is_stored_as_an_error_with_its_stop_reason(
    client: NatsClient, tmp_path: Path
) -> None:
    await make_storage(client)
    provider = ScriptedProvider([answer("I cannot help with that.", stop_reason="refusal")])
    resources = Resources(SETTINGS, provider, toolset(), FileSessionStore(tmp_path / "runs"))
    channel = JobsChannel(
        client,
        resources,
        JobsOptions(identity="worker"),
        await bind_queue(client.jetstream(), QUEUE),
    )
    await channel.open()
    hosted = HostedChannels("worker", resources, [(channel, 1)])
    async with watching(client) as states:
        hosted.start()
        try:
            task_id = await enqueue(client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode())
            done = await states.reached(client, task_id, "complete")
        finally:
            await hosted.drain()
            await hosted.close()
            await channel.shutdown()

    payload = done["result"]["payload"]  # type: ignore[index]
    assert payload["protocol"] == "io.choria.fisk-ai.v1.error"
    assert payload["stop_reason"] == "refusal"
    assert payload["error"] == "I cannot help with that."
    assert "code" not in payload
    assert payload["request"] == REQUEST["id"]
    assert payload["recipient"] == {"name": "ops-console"}
    # A caller's decoder reads it as the error it is, usage included.
    message = decode(json.dumps(payload).encode(), direction=Direction.TO_CALLER)
    assert isinstance(message, TerminalError)
    assert message.usage is not None and message.usage.llm_calls == 1
