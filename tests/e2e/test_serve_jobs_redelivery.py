"""A `fisk serve` worker SIGKILLed in the middle of a queued job: the queue redelivers the task
once its run time passes, another worker resumes the job's journal, and the model call the
killed worker completed is not made again."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from nats.js.api import AckPolicy, ConsumerConfig, DiscardPolicy, RetentionPolicy, StreamConfig

from fisk_ai.broker.server import locate_server_binary
from fisk_ai.serve.jobs.wire import TASKS_STREAM, enqueue, load_task
from tests.e2e.a2a_wire import Site, wire_site
from tests.fakes.messages_api import reply, text, tool_use
from tests.serve.jobs.queue_setup import QUEUE, REQUEST

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

RUN_TIME = 2
"""Seconds: the queue's run time (the consumer's ack_wait), short so a redelivery comes soon."""


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with wire_site(tmp_path, jetstream=True) as made:
        client = await made.broker.connect(name="ajc")
        try:
            js = client.jetstream()
            await js.add_stream(
                StreamConfig(name=TASKS_STREAM, subjects=["CHORIA_AJ.T.*"], max_msgs_per_subject=1)
            )
            await js.add_stream(
                StreamConfig(
                    name=f"CHORIA_AJ_Q_{QUEUE}",
                    subjects=[f"CHORIA_AJ.Q.{QUEUE}.>"],
                    retention=RetentionPolicy.WORK_QUEUE,
                    max_msgs_per_subject=1,
                    discard=DiscardPolicy.NEW,
                )
            )
            await js.add_consumer(
                f"CHORIA_AJ_Q_{QUEUE}",
                ConsumerConfig(
                    durable_name="WORKERS",
                    ack_policy=AckPolicy.EXPLICIT,
                    ack_wait=RUN_TIME,
                    max_ack_pending=10,
                    max_deliver=5,
                ),
            )
        finally:
            await client.close()
        yield made


async def test_a_job_whose_worker_was_killed_is_resumed_from_its_journal(site: Site) -> None:
    site.api.script(
        [
            reply(tool_use("tu_1", "stream_ls", {}), stop_reason="tool_use"),
            reply(text("never delivered")),
            reply(text("ORDERS and PAYMENTS")),
        ]
    )
    # The second model call (after the tool ran) is held: the worker is killed while it waits.
    held = site.api.hold(2)
    config = site.config(extra="    jobs: {}\n")
    client = await site.broker.connect(name="producer")
    try:
        async with site.worker(config, name="first") as first:
            task_id = await enqueue(client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode())
            for _ in range(300):
                if len(site.api.requests) >= 2:
                    break
                await asyncio.sleep(0.05)
            assert len(site.api.requests) == 2, first.errors()
            first.process.send_signal(signal.SIGKILL)
            await first.process.wait()
        held.set()
        killed = await load_task(client.jetstream(), task_id)
        assert killed is not None and killed.state == "active"

        async with site.worker(config, name="second") as second:
            document: dict[str, object] = {}
            for _ in range(400):
                task = await load_task(client.jetstream(), task_id)
                assert task is not None
                if task.state == "complete":
                    document = task.document
                    break
                await asyncio.sleep(0.05)
            assert document, second.errors()
    finally:
        await client.close()

    result = document["result"]
    assert isinstance(result, dict)
    assert result["payload"]["text"] == "ORDERS and PAYMENTS"
    assert document["tries"] == 2
    # The first model call, and the tool result it led to, came from the journal: the resumed
    # run asked the model once, with the conversation the killed worker had built.
    requests = site.api.requests
    assert len(requests) == 3
    assert requests[2]["messages"] == requests[1]["messages"]
    assert any(
        block.get("type") == "tool_result"
        for message in requests[2]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
    )
