"""Trace context on what a served worker sends back, and on queued jobs: a reply carries the
traceparent of the span it was sent in (or the run's root once no span is current), and a job
`fisk jobs submit` queued inside a trace runs in it, its answer naming the trace."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.a2a.codec import decode
from fisk_ai.a2a.in_process import InProcessBroker
from fisk_ai.a2a.messages import Ack, Identity, Message
from fisk_ai.a2a.transport import Delivery
from fisk_ai.a2a.vocabulary import Direction
from fisk_ai.broker.server import locate_server_binary
from fisk_ai.serve.replies import ReplySet
from fisk_ai.telemetry import TelemetrySettings, TurnTrace, start
from tests.patience import DEADLINE
from tests.serve.prompts.engine import prompt
from tests.telemetry.receiver import Receiver

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
ROOT = "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"


@pytest.fixture
async def broker() -> AsyncIterator[InProcessBroker]:
    broker = InProcessBroker()
    yield broker
    await broker.close()


async def test_a_reply_carries_the_span_it_was_sent_in_else_the_runs_root(
    receiver: Receiver, broker: InProcessBroker
) -> None:
    arrived: asyncio.Queue[Message] = asyncio.Queue()

    async def keep(delivery: Delivery) -> None:
        arrived.put_nowait(decode(delivery.data, direction=Direction.TO_CALLER))

    listener = broker.connect()
    inbox = await listener.subscribe(listener.new_inbox(), keep)
    trace = TurnTrace()
    replies = ReplySet(broker.connect(), prompt(), inbox.subject, Identity(name="ops"), trace=trace)
    handle = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint, no_metrics=True))

    def ack(header: object) -> Message:
        return Ack(**header, accepted=True)  # type: ignore[arg-type]

    await replies.send(ack)
    untraced = await arrived.get()
    with handle.run("ops", traceparent=PARENT):
        await replies.send(ack)
        in_span = await arrived.get()
        sent_in = handle.traceparent()
    trace.traceparent = ROOT
    await replies.send(ack)
    after_run = await arrived.get()
    handle.shutdown()

    assert untraced.traceparent is None
    assert in_span.traceparent == sent_in
    assert sent_in.split("-")[1] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert after_run.traceparent == ROOT
    assert [untraced.sequence, in_span.sequence, after_run.sequence] == [1, 2, 3]


@pytest.mark.skipif(locate_server_binary() is None, reason="no nats-server binary")
async def test_a_job_submitted_inside_a_trace_runs_in_it_and_its_answer_says_so(
    receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fisk_ai.agent.resources import Resources
    from fisk_ai.broker.server import EmbeddedBroker
    from fisk_ai.cli.jobs import _submit
    from fisk_ai.serve.jobs.channel import JobsChannel, JobsOptions
    from fisk_ai.serve.jobs.wire import bind_queue, event_subject, load_task
    from fisk_ai.serve.server import HostedChannels
    from fisk_ai.sessions.file import FileSessionStore
    from tests.agent.conftest import SETTINGS, toolset
    from tests.fakes.provider import ScriptedProvider, answer
    from tests.serve.jobs.queue_setup import QUEUE, make_storage

    monkeypatch.setenv("TRACEPARENT", PARENT)
    worker = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint, no_metrics=True))
    async with EmbeddedBroker(jetstream=True) as nats:
        client = await nats.connect(name="test")
        await make_storage(client)
        completed = asyncio.Event()

        async def watch(message: object) -> None:
            if json.loads(message.data)["state"] == "complete":  # type: ignore[attr-defined]
                completed.set()

        await client.subscribe(event_subject("traced-job"), cb=watch)
        submitted = argparse.Namespace(
            sender="ops-console",
            prompt="Which streams have no consumers?",
            queue=QUEUE,
            type="fisk-ai:run",
            id="traced-job",
        )
        assert await _submit(client, submitted) == 0
        resources = Resources(
            SETTINGS,
            ScriptedProvider([answer("ORDERS has none.")]),
            toolset(),
            FileSessionStore(tmp_path / "runs"),
            telemetry=worker,
        )
        settings = await bind_queue(client.jetstream(), QUEUE)
        channel = JobsChannel(client, resources, JobsOptions(identity="worker"), settings)
        await channel.open()
        hosted = HostedChannels("worker", resources, [(channel, 1)])
        hosted.start()
        try:
            await asyncio.wait_for(completed.wait(), timeout=DEADLINE)
            task = await load_task(client.jetstream(), "traced-job")
        finally:
            await hosted.drain()
            await hosted.close()
            await channel.shutdown()
            await client.close()
    worker.shutdown()

    (root,) = [span for span in receiver.spans() if span.name.startswith("invoke_agent")]
    assert root.trace_id.hex() == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert root.parent_span_id.hex() == "00f067aa0ba902b7"
    assert task is not None
    payload = task.document["result"]["payload"]
    assert payload["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert payload["traceparent"].split("-")[2] == root.span_id.hex()
