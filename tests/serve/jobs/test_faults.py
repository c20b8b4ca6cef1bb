"""The jobs channel when the NATS cluster under it falters: a claim that fails because the
session store did not answer (a node of the cluster going away) costs that one pull, not the
channel, and the job is answered once its item comes back; a job whose answer was journaled but
never stored on the task (so its item was not acknowledged) is answered on redelivery without a
model call, also on a worker that answers prompts too (whose shared settings are interactive:
the job's journal still ends completed)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient
from nats.js.api import AckPolicy, ConsumerConfig

from fisk_ai.agent.resources import Resources
from fisk_ai.broker.server import locate_server_binary
from fisk_ai.serve.jobs.channel import JobsChannel, JobsOptions, job_session_id
from fisk_ai.serve.jobs.wire import bind_queue, enqueue, load_task, queue_subject, save_task
from fisk_ai.serve.server import HostedChannels
from fisk_ai.sessions.errors import SessionError
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.fold import fold
from fisk_ai.sessions.records import TerminalReason
from tests.agent.conftest import SETTINGS, toolset
from tests.fakes.provider import ScriptedProvider, answer
from tests.serve.jobs.queue_setup import QUEUE, REQUEST, make_storage
from tests.serve.jobs.task_polling import wait_for_state

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)


class UnreachableOnce(FileSessionStore):
    """A session store whose first lookup fails as the jetstream store's does when the node it
    asked went away."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.failed = asyncio.Event()

    async def exists(self, run_id: str) -> bool:
        if not self.failed.is_set():
            self.failed.set()
            raise SessionError("could not look up session (NATS did not answer in time)")
        return await super().exists(run_id)


async def test_a_claim_the_store_failed_is_answered_on_redelivery(
    client: NatsClient, tmp_path: Path
) -> None:
    await make_storage(client, consumer=False)
    # `ajc queue add FISK_AI --run-time 1s`: the failed claim's item comes back within a second.
    await client.jetstream().add_consumer(
        f"CHORIA_AJ_Q_{QUEUE}",
        ConsumerConfig(durable_name="WORKERS", ack_policy=AckPolicy.EXPLICIT, ack_wait=1),
    )
    store = UnreachableOnce(tmp_path / "runs")
    provider = ScriptedProvider([answer("ORDERS has none")])
    resources = Resources(SETTINGS, provider, toolset(), store)
    channel = JobsChannel(
        client,
        resources,
        JobsOptions(identity="worker"),
        await bind_queue(client.jetstream(), QUEUE),
    )
    await channel.open()
    hosted = HostedChannels("worker", resources, [(channel, 1)])
    hosted.start()
    try:
        task_id = await enqueue(client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode())
        await asyncio.wait_for(store.failed.wait(), 10)
        done = await wait_for_state(client, task_id, "complete")
        assert hosted.running == 0
    finally:
        await hosted.drain()
        await hosted.close()
        await channel.shutdown()

    assert done["result"]["payload"]["text"] == "ORDERS has none"
    assert provider.calls == 1


async def test_an_answer_journaled_but_not_stored_is_answered_from_the_journal(
    client: NatsClient, tmp_path: Path
) -> None:
    await make_storage(client)
    # Served prompts make the shared settings interactive; a job's run is narrowed to a
    # non-interactive one, since nobody can send it another turn.
    settings = dataclasses.replace(SETTINGS, interactive=True)
    store = FileSessionStore(tmp_path / "runs")
    provider = ScriptedProvider([answer("ORDERS has none")])
    resources = Resources(settings, provider, toolset(), store)
    channel = JobsChannel(
        client,
        resources,
        JobsOptions(identity="worker"),
        await bind_queue(client.jetstream(), QUEUE),
    )
    await channel.open()
    hosted = HostedChannels("worker", resources, [(channel, 1)])
    hosted.start()
    js = client.jetstream()
    try:
        task_id = await enqueue(client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode())
        await wait_for_state(client, task_id, "complete")
        journal = fold(await store.read(job_session_id("worker", task_id)))
        assert journal.terminal is not None
        assert journal.terminal.reason is TerminalReason.COMPLETED
        # As if the worker died after journaling the answer and before storing it: the record
        # is back to active and the item on the queue again.
        task = await load_task(js, task_id)
        assert task is not None
        del task.document["result"]
        task.document["state"] = "retry"
        await save_task(js, task)
        item = json.dumps({"kind": 0, "job": task_id}).encode()
        await js.publish(queue_subject(QUEUE, task_id), item, headers={"Nats-Msg-Id": "again"})
        done = await wait_for_state(client, task_id, "complete")
    finally:
        await hosted.drain()
        await hosted.close()
        await channel.shutdown()

    assert done["result"]["payload"]["text"] == "ORDERS has none"
    assert provider.calls == 1
