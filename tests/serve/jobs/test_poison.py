"""Poison on the work queue, against a real nats-server: an item, a task document or a payload
that no worker could ever run is answered (the task stored ``terminated`` with the reason) or,
when there is no readable task to answer on, terminated on the queue (``+TERM``, as asyncjobs
does with a corrupt item), and the same worker then completes a good job."""

from __future__ import annotations

import asyncio
import base64
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
from tests.serve.jobs.states import TaskStates, watching
from tests.serve.jobs.test_channel import QUEUE, REQUEST, client, make_storage

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)

__all__ = ["client"]

DEEP = 100_000
"""Levels of nesting, far past what a recursive JSON reader survives."""
POISON_ID = "poison-1"


def document_text(*, tries: str = "0", payload: bytes | None = None, extra: str = "") -> bytes:
    """A task document as raw text, so a test can write what json.dumps never would."""
    encoded = base64.b64encode(payload if payload is not None else json.dumps(REQUEST).encode())
    return (
        f'{{"id":"{POISON_ID}","type":"fisk-ai:run","queue":"{QUEUE}",'
        f'"payload":"{encoded.decode()}","max_tries":10,"state":"new",'
        f'"created":"2026-08-15T11:30:00.000000000Z","tries":{tries}{extra}}}'
    ).encode()


@dataclass(frozen=True)
class Poison:
    item: bytes
    """The work item, as it lands on the queue."""
    document: bytes | None = None
    """The task document stored under the item's id, or None for no task at all."""
    answered: str = ""
    """What the task's last_err says once it is answered; empty when nothing can be stored on
    it and the item is terminated on the queue instead."""


ITEM = json.dumps({"kind": 0, "job": POISON_ID}).encode()

POISONS = {
    "an item that is not JSON": Poison(b"{not json"),
    "a deeply nested item": Poison(b"[" * DEEP + b"]" * DEEP),
    "an item naming no task": Poison(b'{"kind":0,"job":{"id":"x"}}'),
    "a task document that is not JSON": Poison(ITEM, b'{"id":"poison-1", not json'),
    "a deeply nested task document": Poison(
        ITEM, document_text(extra=',"x":' + "[" * DEEP + "]" * DEEP)
    ),
    "tries: 1e999": Poison(ITEM, document_text(tries="1e999")),
    "a deep payload": Poison(
        ITEM,
        document_text(payload=b"[" * DEEP + b"]" * DEEP),
        answered="the task payload nests deeper than 100 levels",
    ),
    "tries that are not a count": Poison(
        ITEM, document_text(tries='"many"'), answered='the task\'s tries is "many"'
    ),
}


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
