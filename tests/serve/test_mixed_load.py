"""Every channel of one `fisk serve` process under load at once: 32 concurrent a2a prompts
through the project's PromptsClient, remote tool calls, and 100 queued jobs. No reply is lost,
every prompt and job gets its own answer, and the server's RSS growth over the load is printed
(reported, not bounded: it depends on the allocator and the machine).

Slack joins here once its fake lands (tests/fakes/ by the Slack work): add ``slack`` to the
worker's channels in ``SERVED``, and a ``slack_mentions`` coroutine beside ``prompts`` and
``tool_calls`` below that mentions the bot N times and waits for N answers."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from fisk_ai.a2a.client import call_tool
from fisk_ai.a2a.messages import TerminalResult, ToolReply
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.prompts_client import PromptsClient
from fisk_ai.broker.server import locate_server_binary
from tests.fakes.nats_cluster import (
    IDENTITY,
    Channels,
    Fleet,
    fleet,
    job_answer,
    job_prompt,
    run_fleet,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

PROMPTS = 32
JOBS = 100
TOOL_CALLERS = 4
CALLS_EACH = 8
FIRST_PROMPT = 1000
"""Prompts are numbered after the jobs, so the fake model tells their answers apart."""
WAIT = timedelta(seconds=60)
SERVED = Channels(job_slots=8, prompt_slots=PROMPTS, tools=True, tool_slots=TOOL_CALLERS)


def resident_kib(pid: int) -> int:
    """The process's VmRSS, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


async def prompts(transport: NatsTransport) -> list[str]:
    client = PromptsClient(transport, IDENTITY, request_timeout=WAIT)
    ended = await asyncio.gather(
        *(client.ask(job_prompt(FIRST_PROMPT + number)) for number in range(PROMPTS))
    )
    texts = []
    for terminal in ended:
        assert isinstance(terminal, TerminalResult), terminal
        texts.append(terminal.text)
    return texts


async def tool_calls(transport: NatsTransport) -> list[ToolReply]:
    async def caller() -> list[ToolReply]:
        return [
            await call_tool(transport, IDENTITY, "stream_ls", {}, request_timeout=WAIT)
            for _ in range(CALLS_EACH)
        ]

    callers = await asyncio.gather(*(caller() for _ in range(TOOL_CALLERS)))
    return [reply for replies in callers for reply in replies]


async def warm_up(running: Fleet) -> None:
    """One prompt, so the growth measured is the load's and not the first model call's
    imports (the anthropic SDK is imported only when a model is first called)."""
    transport = NatsTransport(await running.cluster.connect("warm-up"), owned=True)
    try:
        client = PromptsClient(transport, IDENTITY, request_timeout=WAIT)
        ended = await client.ask(job_prompt(FIRST_PROMPT + PROMPTS))
        assert isinstance(ended, TerminalResult), ended
    finally:
        await transport.close()


async def load(running: Fleet) -> tuple[list[str], list[ToolReply], int]:
    """Prompts, tool calls and jobs at once; the prompts' answers, the tool replies, and how
    many jobs ended with their own answer."""
    transport = NatsTransport(await running.cluster.connect("caller"), owned=True)
    try:
        answered, replies, run = await asyncio.gather(
            prompts(transport), tool_calls(transport), run_fleet(running, JOBS, within=90.0)
        )
    finally:
        await transport.close()
    jobs_answered = sum(
        1
        for index, task in run.tasks.items()
        if task["state"] == "complete"
        and task["result"]["payload"].get("text") == job_answer(index)
    )
    return answered, replies, jobs_answered


async def test_one_process_serves_prompts_tools_and_jobs_at_once_under_load(
    tmp_path: Path,
) -> None:
    async with fleet(tmp_path, nodes=1, workers=1, channels=SERVED) as running:
        pid = running.workers[0].process.pid
        started = resident_kib(pid)
        await warm_up(running)
        before = resident_kib(pid)
        answered, replies, jobs_answered = await load(running)
        after = resident_kib(pid)
        errors = running.workers[0].errors()

    assert answered == [job_answer(FIRST_PROMPT + number) for number in range(PROMPTS)], errors
    assert len(replies) == TOOL_CALLERS * CALLS_EACH
    assert [reply for reply in replies if reply.is_error] == []
    assert jobs_answered == JOBS, errors
    print(
        f"\nfisk serve RSS: {started / 1024:.1f} MiB at start, {before / 1024:.1f} MiB after one "
        f"prompt, {after / 1024:.1f} MiB after {PROMPTS} prompts + "
        f"{TOOL_CALLERS * CALLS_EACH} tool calls + {JOBS} jobs "
        f"({(after - before) / 1024:+.1f} MiB under the load)"
    )
