"""Every channel of one `fisk serve` process under load at once: 32 concurrent a2a prompts
through the project's PromptsClient, remote tool calls, 100 queued jobs, and mentions of its
Slack bot in several threads (the fake Slack of tests/fakes/slack.py, reached through
SLACK_API_URL). No reply is lost, every prompt, job and mention gets its own answer (a mention's
in its own thread), and the server's RSS growth over the load is printed (reported, not bounded:
it depends on the allocator and the machine).

``slack_too`` starts the fake Slack and puts its tokens and address in the environment the
worker inherits."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
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
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack, Posted
from tests.patience import DEADLINE, DEADLINE_DELTA

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
MENTIONS = 6
FIRST_MENTION = 2000
"""Mentions are numbered after the prompts. Each opens a thread in a channel of its own, so the
channel history a thread's opening turn reads holds no other mention's number."""
ANA = "U024BE7LH"
WAIT = DEADLINE_DELTA
SERVED = Channels(
    job_slots=8, prompt_slots=PROMPTS, tools=True, tool_slots=TOOL_CALLERS, slack_slots=3
)


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


@pytest.fixture
async def slack_too(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeSlack]:
    """The fake Slack, and what a worker needs to answer mentions in it."""
    fake = FakeSlack()
    fake.person(ANA, real_name="Ana Silva", display_name="ana", handle="ana.silva")
    await fake.start()
    # The workers' environment is this process's, less the terminal's own variables.
    monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_API_URL", fake.api_url)
    yield fake
    await fake.stop()


def answers(slack: FakeSlack, mention: Posted, text: str) -> Callable[[], list[Posted]]:
    """The bot's messages in ``mention``'s thread that read ``text``."""
    return lambda: [m for m in slack.bot_messages(mention.channel, mention.ts) if m.text == text]


async def slack_mentions(slack: FakeSlack) -> list[int]:
    """A mention in each of several threads at once; how many answers each thread got."""
    mentions = await asyncio.gather(
        *(
            slack.mention(f"C0LOAD{number}", ANA, job_prompt(FIRST_MENTION + number))
            for number in range(MENTIONS)
        )
    )
    for number, mention in enumerate(mentions):
        expected = answers(slack, mention, job_answer(FIRST_MENTION + number))
        await slack.wait_for(expected, what=f"the answer to mention {number} in its thread")
    return [
        len(answers(slack, mention, job_answer(FIRST_MENTION + number))())
        for number, mention in enumerate(mentions)
    ]


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


async def load(
    running: Fleet, slack: FakeSlack
) -> tuple[list[str], list[ToolReply], int, list[int]]:
    """Prompts, tool calls, jobs and Slack mentions at once; the prompts' answers, the tool
    replies, how many jobs ended with their own answer, and how many answers each mention's
    thread got."""
    transport = NatsTransport(await running.cluster.connect("caller"), owned=True)
    try:
        answered, replies, run, threads = await asyncio.gather(
            prompts(transport),
            tool_calls(transport),
            run_fleet(running, JOBS, within=DEADLINE),
            slack_mentions(slack),
        )
    finally:
        await transport.close()
    jobs_answered = sum(
        1
        for index, task in run.tasks.items()
        if task["state"] == "complete"
        and task["result"]["payload"].get("text") == job_answer(index)
    )
    return answered, replies, jobs_answered, threads


async def test_one_process_serves_prompts_tools_jobs_and_slack_at_once_under_load(
    tmp_path: Path, slack_too: FakeSlack
) -> None:
    async with fleet(tmp_path, nodes=1, workers=1, channels=SERVED) as running:
        pid = running.workers[0].process.pid
        started = resident_kib(pid)
        await warm_up(running)
        before = resident_kib(pid)
        answered, replies, jobs_answered, threads = await load(running, slack_too)
        after = resident_kib(pid)
        errors = running.workers[0].errors()

    assert answered == [job_answer(FIRST_PROMPT + number) for number in range(PROMPTS)], errors
    assert len(replies) == TOOL_CALLERS * CALLS_EACH
    assert [reply for reply in replies if reply.is_error] == []
    assert jobs_answered == JOBS, errors
    assert threads == [1] * MENTIONS, errors
    print(
        f"\nfisk serve RSS: {started / 1024:.1f} MiB at start, {before / 1024:.1f} MiB after one "
        f"prompt, {after / 1024:.1f} MiB after {PROMPTS} prompts + "
        f"{TOOL_CALLERS * CALLS_EACH} tool calls + {JOBS} jobs + {MENTIONS} Slack mentions "
        f"({(after - before) / 1024:+.1f} MiB under the load)"
    )
