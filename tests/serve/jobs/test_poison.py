"""Poison on the work queue, against a real nats-server: an item, a task document or a payload
that no worker could ever run is answered (the task stored ``terminated`` with the reason) or,
when there is no readable task to answer on, terminated on the queue (``+TERM``, as asyncjobs
does with a corrupt item), and the same worker then completes a good job."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from fisk_ai.agent.resources import Resources
from fisk_ai.broker.server import locate_server_binary
from fisk_ai.serve.jobs.channel import JobsChannel, JobsOptions
from fisk_ai.serve.jobs.wire import bind_queue, enqueue, queue_stream, queue_subject, task_subject
from fisk_ai.serve.server import HostedChannels
from fisk_ai.sessions.file import FileSessionStore
from tests.agent.conftest import SETTINGS, toolset
from tests.fakes.provider import ScriptedProvider, answer
from tests.serve.jobs.poisons import POISON_ID, POISONS, Poison
from tests.serve.jobs.queue_setup import QUEUE, REQUEST, make_storage
from tests.serve.jobs.states import TaskStates, watching

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)


@dataclass
class Worker:
    hosted: HostedChannels
    states: TaskStates
    provider: ScriptedProvider


@pytest.fixture
async def worker(client: NatsClient, tmp_path: Path) -> AsyncIterator[Worker]:
    await make_storage(client)
    provider = ScriptedProvider([answer("ORDERS has none.")])
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
            yield Worker(hosted, states, provider)
        finally:
            await hosted.drain()
            await hosted.close()
            await channel.shutdown()


@pytest.mark.parametrize("poison", POISONS.values(), ids=POISONS.keys())
async def test_a_poison_item_is_answered_and_the_worker_serves_on(
    client: NatsClient, worker: Worker, poison: Poison
) -> None:
    js = client.jetstream()
    if poison.document is not None:
        await js.publish(task_subject(POISON_ID), poison.document)
    await js.publish(queue_subject(QUEUE, POISON_ID), poison.item)
    good = await enqueue(client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode())

    # One slot, one queue in order: the good job is taken only once the poison was dealt with.
    answered_good = asyncio.ensure_future(worker.states.reached(client, good, "complete"))
    serving = worker.hosted.serving
    assert serving is not None
    await asyncio.wait({answered_good, serving}, return_when=asyncio.FIRST_COMPLETED)
    assert not serving.done(), "the worker stopped serving"
    done = await answered_good

    assert done["result"]["payload"]["text"] == "ORDERS has none."  # type: ignore[index]
    assert worker.provider.calls == 1
    info = await js.consumer_info(queue_stream(QUEUE), "WORKERS")
    assert info.num_pending + info.num_ack_pending == 0, "the poison item is still on the queue"
    if poison.answered:
        assert worker.states.of(POISON_ID) == ["terminated"]
        stored = await js.get_last_msg("CHORIA_AJ_TASKS", task_subject(POISON_ID))
        record = json.loads(stored.data or b"")
        assert record["state"] == "terminated"
        assert record["last_err"].startswith(poison.answered)
    elif poison.document is not None:
        # Nobody can read it, so nothing is written over what the producer stored.
        stored = await js.get_last_msg("CHORIA_AJ_TASKS", task_subject(POISON_ID))
        assert stored.data == poison.document
