"""A redelivered job whose journal was started under another configuration, against a real
nats-server: its refusal tells the operator what a job can do, since a job has no --force."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from fisk_ai.agent.resources import Resources
from fisk_ai.broker.server import locate_server_binary
from fisk_ai.llm.errors import ProviderError
from fisk_ai.serve.jobs.channel import JobsChannel, JobsOptions, job_session_id
from fisk_ai.serve.jobs.wire import bind_queue, enqueue
from fisk_ai.serve.server import HostedChannels
from fisk_ai.sessions.file import FileSessionStore
from tests.agent.conftest import SETTINGS, make_runner, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer
from tests.serve.jobs.queue_setup import QUEUE, REQUEST, make_storage
from tests.serve.jobs.states import watching

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)


TASK_ID = "2Jz0resumerefusal00000000000"


async def test_a_job_refused_across_a_changed_model_offers_what_a_job_can_do(
    client: NatsClient, tmp_path: Path
) -> None:
    await make_storage(client)
    store = FileSessionStore(tmp_path / "runs")
    # The first delivery ran under another model and ended on an error the job is redelivered for.
    before = dataclasses.replace(SETTINGS, model="earlier-model")
    failing = ScriptedProvider([ProviderError("the endpoint went away")])
    async with make_runner(
        provider=failing, tools=toolset(), store=store, events=RecordingSink(), settings=before
    ) as runner:
        await runner.start("how many streams", session_id=job_session_id("worker", TASK_ID))
    resources = Resources(SETTINGS, ScriptedProvider([answer("3")]), toolset(), store)
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
            await enqueue(
                client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode(), task_id=TASK_ID
            )
            done = await states.reached(client, TASK_ID, "complete")
        finally:
            await hosted.drain()
            await hosted.close()
            await channel.shutdown()

    error = done["result"]["payload"]["error"]  # type: ignore[index]
    assert "model: earlier-model -> test-model" in error
    assert "--force" not in error
    assert "force: true" in error
    assert "new job" in error
