"""The jobs channel's lifecycle events on the wire as an asyncjobs Go client reads them, and its
drain: the running job stops at its next resumable point and goes back to the queue, nothing
more is taken off it."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg

from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.broker.server import locate_server_binary
from fisk_ai.serve.jobs.channel import JobsChannel, JobsOptions, job_session_id
from fisk_ai.serve.jobs.wire import EVENT_TYPE, bind_queue, enqueue, load_task, parse_time
from fisk_ai.serve.server import HostedChannels
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.fold import SessionStatus, fold
from tests.agent.conftest import SETTINGS, FakeTool, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.serve.jobs.queue_setup import QUEUE, REQUEST, make_storage
from tests.serve.jobs.states import PATIENCE, watching
from tests.serve.jobs.task_polling import wait_for_state
from tests.serve.prompts.engine import Held

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)


KSUID = re.compile(r"[0-9A-Za-z]{27}")
# The fields of asyncjobs' TaskStateChangeEvent and their JSON types, as Go decodes them.
GO_EVENT_FIELDS: dict[str, type] = {
    "event_id": str,
    "type": str,
    "timestamp": str,
    "task_id": str,
    "state": str,
    "tries": int,
    "queue": str,
    "task_type": str,
    "task_age": int,
}


async def start(
    client: NatsClient, resources: Resources, *, workers: int = 1
) -> tuple[JobsChannel, HostedChannels]:
    settings = await bind_queue(client.jetstream(), QUEUE)
    channel = JobsChannel(
        client, resources, JobsOptions(identity="worker", workers=workers), settings
    )
    await channel.open()
    hosted = HostedChannels("worker", resources, [(channel, workers)])
    hosted.start()
    return channel, hosted


async def test_the_lifecycle_events_read_as_a_go_client_reads_them(
    client: NatsClient, tmp_path: Path
) -> None:
    await make_storage(client)
    events: list[dict[str, Any]] = []

    async def keep(message: Msg) -> None:
        assert message.subject.startswith("CHORIA_AJ.E.task_state.")
        events.append(json.loads(message.data))

    watching = await client.subscribe("CHORIA_AJ.E.>", cb=keep)
    await client.flush()
    task_id = await enqueue(client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode())
    resources = Resources(
        SETTINGS, ScriptedProvider([answer("none")]), toolset(), FileSessionStore(tmp_path / "r")
    )
    channel, hosted = await start(client, resources)
    try:
        await wait_for_state(client, task_id, "complete")
        for _ in range(100):
            if len(events) >= 3:
                break
            await asyncio.sleep(0.02)
    finally:
        await hosted.drain()
        await hosted.close()
        await channel.shutdown()
        await watching.unsubscribe()

    assert [event["state"] for event in events] == ["new", "active", "complete"]
    assert [event["tries"] for event in events] == [0, 1, 1]
    for event in events:
        # Every field a Go TaskStateChangeEvent has, of the type it decodes into, and no other.
        assert set(event) <= set(GO_EVENT_FIELDS) | {"last_error"}
        for key, kind in GO_EVENT_FIELDS.items():
            assert isinstance(event[key], kind), (key, event)
        assert event["type"] == EVENT_TYPE
        assert KSUID.fullmatch(event["event_id"])
        assert event["task_id"] == task_id
        assert (event["queue"], event["task_type"]) == (QUEUE, "fisk-ai:run")
        assert parse_time(event["timestamp"]) is not None
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", event["timestamp"])
        assert event["task_age"] >= 0
    assert len({event["event_id"] for event in events}) == 3


async def test_a_drain_stops_the_running_job_where_it_resumes_and_takes_no_other(
    client: NatsClient, tmp_path: Path
) -> None:
    await make_storage(client)
    held = Held()
    tool = FakeTool("slow", held)
    provider = ScriptedProvider([calls(call("t1", "slow")), answer("finished")])
    running = await enqueue(client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode())
    waiting = await enqueue(client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode())
    store = FileSessionStore(tmp_path / "runs")
    resources = Resources(SETTINGS, provider, toolset(tool), store)
    async with watching(client) as states:
        channel, hosted = await start(client, resources)
        try:
            await asyncio.wait_for(held.started.wait(), PATIENCE)
            await hosted.drain()
            # The tool already running finishes; the model is not asked again after it.
            held.release.set()
            returned = await states.reached(client, running, "retry")
            await hosted.wait_idle()
        finally:
            held.release.set()
            await hosted.close()
            await channel.shutdown()

    assert returned["last_err"] == (
        "the worker drained part way through the run; the redelivery resumes it"
    )
    assert "result" not in returned
    assert (provider.calls, len(tool.executed)) == (1, 1)
    # The second job was never taken: its record is as the producer wrote it, and both items
    # are on the queue for another worker (the drained one after its delay).
    untouched = await load_task(client.jetstream(), waiting)
    assert untouched is not None
    assert (untouched.state, untouched.document["tries"]) == ("new", 0)
    info = await client.jetstream().consumer_info(f"CHORIA_AJ_Q_{QUEUE}", "WORKERS")
    assert info.num_pending + info.num_ack_pending == 2
    # Where it stopped is where the redelivery goes on: the tool's result is journaled, and a
    # resume asks the model once more and runs nothing again.
    session_id = job_session_id("worker", running)
    assert fold(await store.read(session_id)).status is SessionStatus.SUSPENDED
    async with Runner(resources, events=RecordingSink()) as resumed:
        result = await resumed.resume(session_id)
    assert result.answer == "finished"
    assert (provider.calls, len(tool.executed)) == (2, 1)
