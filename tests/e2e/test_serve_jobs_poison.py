"""The installed `fisk serve` taking every poison item of tests/serve/jobs/test_poison.py off a
real asyncjobs queue, one after another: the process keeps running, and after each poison it
answers a good job."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.broker.server import locate_server_binary
from fisk_ai.serve.jobs.wire import enqueue, queue_subject, task_subject
from tests.e2e.a2a_wire import Site, wire_site
from tests.fakes.messages_api import reply, text
from tests.serve.jobs.poisons import POISON_ID, POISONS
from tests.serve.jobs.queue_setup import QUEUE, REQUEST, make_storage
from tests.serve.jobs.states import watching

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with wire_site(tmp_path, jetstream=True) as made:
        client = await made.broker.connect(name="ajc")
        try:
            await make_storage(client)
        finally:
            await client.close()
        yield made


async def test_fisk_serve_answers_a_good_job_after_each_poison_item(site: Site) -> None:
    site.api.script([reply(text(f"answer {n}")) for n in range(len(POISONS))])
    config = site.config(extra="    jobs: {}\n")
    async with site.worker(config) as worker, site.peer() as peer:
        js = peer.client.jetstream()
        async with watching(peer.client) as states:
            for number, (name, poison) in enumerate(POISONS.items()):
                poison_id = f"{POISON_ID}-{number}"
                if poison.document is not None:
                    document = poison.document.replace(POISON_ID.encode(), poison_id.encode())
                    await js.publish(task_subject(poison_id), document)
                item = poison.item.replace(POISON_ID.encode(), poison_id.encode())
                await js.publish(queue_subject(QUEUE, poison_id), item)
                good = await enqueue(
                    peer.client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode()
                )
                answered = asyncio.ensure_future(states.reached(peer.client, good, "complete"))
                exited = asyncio.ensure_future(worker.process.wait())
                await asyncio.wait({answered, exited}, return_when=asyncio.FIRST_COMPLETED)
                exited.cancel()
                assert worker.process.returncode is None, f"{name}: {worker.errors()}"
                done = await answered
                assert done["result"]["payload"]["text"] == f"answer {number}", name  # type: ignore[index]
    assert "Traceback" not in worker.errors()
