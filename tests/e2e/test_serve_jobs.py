"""`fisk serve` answering prompts and queued jobs from one process, and `fisk jobs submit` then
`fisk jobs show` giving the answer, against the fake Messages API and a real nats-server. A job's
journal ends completed even though the prompts beside it keep their conversations open."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fisk_ai.broker.server import locate_server_binary
from fisk_ai.serve.jobs.channel import job_session_id
from fisk_ai.serve.prompts.options import conversation_session_id
from tests.e2e.a2a_wire import IDENTITY, Site, wire_site
from tests.e2e.agent_runs import fisk
from tests.e2e.conftest import FISK as INSTALLED_FISK
from tests.fakes.messages_api import reply, text

if TYPE_CHECKING:
    from nats.aio.msg import Msg
from tests.serve.jobs.queue_setup import make_storage

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

FISK = str(INSTALLED_FISK)


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


def session_status(site: Site, sessions: Path, session_id: str) -> str:
    """The Status line `fisk session show` prints for ``session_id``."""
    shown = fisk(
        "session",
        "--state-dir",
        str(sessions),
        "show",
        session_id,
        cwd=site.home,
        env=site.environment,
    )
    assert shown.returncode == 0, shown.stderr
    [status] = [line for line in shown.stdout.splitlines() if line.strip().startswith("Status:")]
    return status.split(":", 1)[1].strip()


async def test_a_job_beside_prompts_ends_completed_and_a_prompt_stays_open(site: Site) -> None:
    site.api.script(
        [reply(text("ORDERS has none")), reply(text("the fleet is green")), reply(text("still"))]
    )
    sessions = site.home / "sessions"
    config = site.config(
        extra=f"    jobs: {{}}\nharness:\n  sessions:\n    options:\n      directory: {sessions}\n"
    )
    async with site.worker(config) as worker, site.peer() as peer:
        finished: asyncio.Queue[str] = asyncio.Queue()

        async def seen(message: Msg) -> None:
            event = json.loads(message.data)
            if event.get("state") == "complete":
                finished.put_nowait(str(event["task_id"]))

        await peer.client.subscribe("CHORIA_AJ.E.task_state.>", cb=seen)
        await peer.client.flush()
        submitted = await fisk_jobs(site, "submit", "Which streams have no consumers?")
        match = re.fullmatch(r"Enqueued task (\S+)\n", submitted)
        assert match, submitted
        task_id = match.group(1)
        assert await asyncio.wait_for(finished.get(), 30) == task_id, worker.errors()

        first = await (
            await peer.send(peer.message("request.prompt", request="p1", prompt="how is it"))
        ).through_terminal()
        assert first[-1].document["text"] == "the fleet is green", worker.errors()
        token = str(first[0].document["conversation_token"])
        prompt_status = session_status(site, sessions, conversation_session_id(IDENTITY, token))
        job_status = session_status(site, sessions, job_session_id(IDENTITY, task_id))

        # The prompt's conversation takes its next turn.
        second = await (
            await peer.send(
                peer.message(
                    "request.prompt", request="p2", prompt="and now", conversation_token=token
                )
            )
        ).through_terminal()
        assert second[-1].document["text"] == "still", worker.errors()

    assert job_status == "completed"
    assert prompt_status == "completed"
