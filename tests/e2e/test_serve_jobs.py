"""`fisk serve` answering prompts and queued jobs from one process, and `fisk jobs submit` then
`fisk jobs show` giving the answer, against the fake Messages API and a real nats-server."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.broker.server import locate_server_binary
from tests.e2e.a2a_wire import Site, wire_site
from tests.fakes.messages_api import reply, text
from tests.serve.jobs.test_channel import make_storage

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

FISK = str(Path(os.environ.get("VIRTUAL_ENV", "")) / "bin" / "fisk")


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with wire_site(tmp_path, jetstream=True) as made:
        client = await made.broker.connect(name="ajc")
        try:
            await make_storage(client)
        finally:
            await client.close()
        yield made


async def fisk_jobs(site: Site, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        FISK,
        "jobs",
        "--context",
        "test",
        *args,
        env=site.environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_one_process_answers_prompts_and_jobs(site: Site) -> None:
    site.api.script([reply(text("the answer")), reply(text("the answer"))])
    config = site.config(extra="    jobs: {}\n")
    async with site.worker(config) as worker, site.peer() as peer:
        submitted = await fisk_jobs(site, "submit", "Which streams have no consumers?")
        match = re.fullmatch(r"Enqueued task (\S+)\n", submitted)
        assert match, submitted
        task_id = match.group(1)
        prompted = await (
            await peer.send(peer.message("request.prompt", request="p1", prompt="hello"))
        ).through_terminal()
        assert prompted[-1].kind == "result", worker.errors()
        assert prompted[-1].document["text"] == "the answer"
        shown = ""
        for _ in range(100):
            shown = await fisk_jobs(site, "show", task_id)
            if "State: complete" in shown:
                break
            await asyncio.sleep(0.1)
        assert "State: complete" in shown, (shown, worker.errors())
        assert "Stop Reason: end_turn" in shown
        assert shown.rstrip().endswith("the answer")
        listed = await fisk_jobs(site, "ls")
        assert task_id in listed and "complete" in listed
