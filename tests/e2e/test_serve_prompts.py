"""`fisk serve` answering prompts, as a peer reaches it: the installed command against an embedded
nats-server (found through a NATS context file) and the fake Messages API, wrapping a fake fisk
application, with the `ask` client on the other end.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fisk_ai.a2a.messages import (
    Ack,
    EventMessage,
    EventToolCall,
    EventToolResult,
    TerminalError,
    TerminalResult,
    UnknownEvent,
)
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.a2a.vocabulary import ErrorCode
from tests.e2e.conftest import FISK, RunFisk
from tests.e2e.served_prompts import IDENTITY, MODEL, SERVED_PROMPTS_MARKS, WAIT, Setup, agent_of
from tests.fakes.fiskapp import (
    kill_quietly,
    open_pid_fifo,
    read_pid,
    release,
)
from tests.fakes.messages_api import reply, text, tool_use

pytestmark = SERVED_PROMPTS_MARKS

CHANNEL_DRAINING_LINE = (
    "draining: no new work is taken and running work stops where it can resume. "
    "Interrupt again to stop now"
)


def expected_banner(work_dir: Path) -> str:
    lines = [
        f"Serving {IDENTITY}/1.0.0:",
        "",
        "         Endpoints: a2a/prompts",
        "                    a2a",
        f"             Model: {MODEL}",
        "     Agent Context: test",
        "          Sessions: file",
        "         Knowledge: disabled",
        "         Telemetry: disabled",
        f"    Tool Directory: {work_dir}",
        "      Tool Timeout: 5m0s",
        "",
        "  Answering prompts over a2a:",
        "",
        f"            Requests: choria.fisk-ai.task.{IDENTITY}",
        f"             Cancels: choria.fisk-ai.cancel.{IDENTITY}.*",
        "             Workers: 1",
        "    Answering a prompt runs the agent loop and reaches every tool the top-level include "
        "and exclude selected.",
        "",
        "  Serving tools over a2a:",
        "",
        f"           Discovery: choria.fisk-ai.discovery.{IDENTITY}",
        f"               Tools: choria.fisk-ai.tool.{IDENTITY}",
        "         Concurrency: 2",
        "        Tool Timeout: 30s",
        "             Exposed: status",
        "                      hold",
    ]
    return "\n".join(lines) + "\n"


@dataclass
class Served:
    process: asyncio.subprocess.Process
    banner: str


@pytest.fixture
async def served(setup: Setup) -> AsyncIterator[Served]:
    process = await asyncio.create_subprocess_exec(
        str(FISK),
        "serve",
        "--config",
        str(setup.config),
        "--work-dir",
        str(setup.work_dir),
        "--state-dir",
        str(setup.state_dir),
        env=setup.environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        expected = expected_banner(setup.work_dir)
        printed = await asyncio.wait_for(process.stdout.readexactly(len(expected)), WAIT)
        yield Served(process, printed.decode())
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def line_after_operator_lines(served: Served) -> str:
    """The next stderr line that is not an operator line: after an interrupt, the drain's."""
    assert served.process.stderr is not None
    while True:
        line = (await served.process.stderr.readline()).decode().rstrip("\n")
        assert line, "fisk serve closed its stderr"
        if not line.startswith("level=INFO "):
            assert line == CHANNEL_DRAINING_LINE
            return line


async def interrupt_and_wait(served: Served) -> tuple[int, str]:
    served.process.send_signal(signal.SIGINT)
    _, stderr = await asyncio.wait_for(served.process.communicate(), WAIT)
    assert served.process.returncode is not None
    return served.process.returncode, stderr.decode()


async def test_serve_prints_the_prompts_banner(setup: Setup, served: Served) -> None:
    assert served.banner == expected_banner(setup.work_dir)


async def test_sigint_drains_and_exits_zero(served: Served) -> None:
    returncode, stderr = await interrupt_and_wait(served)

    assert returncode == 0, stderr
    assert CHANNEL_DRAINING_LINE in stderr


async def test_the_operator_lines_are_written_at_info_without_verbose(
    setup: Setup, served: Served, peer: NatsTransport
) -> None:
    setup.api.script([reply(text("the fleet is green"))])
    acks: list[Ack] = []
    ended = await agent_of(peer).ask("how is the fleet", options=TurnOptions(on_ack=acks.append))
    assert isinstance(ended, TerminalResult), ended

    _, stderr = await interrupt_and_wait(served)

    accepted = [line for line in stderr.splitlines() if '"Accepted a prompt"' in line]
    assert len(accepted) == 1
    assert accepted[0].startswith('level=INFO msg="Accepted a prompt" channel=a2a/prompts request=')
    assert accepted[0].endswith(" prompt_bytes=16")


async def test_a_prompt_gets_an_ack_the_tool_events_and_the_answer(
    setup: Setup, served: Served, peer: NatsTransport
) -> None:
    setup.api.script(
        [
            reply(tool_use("tu_1", "status", {}), stop_reason="tool_use"),
            reply(text("the fleet is green")),
        ]
    )
    acks: list[Ack] = []
    events: list[EventMessage | UnknownEvent] = []

    ended = await agent_of(peer).ask(
        "how is the fleet", options=TurnOptions(on_ack=acks.append, on_event=events.append)
    )

    assert isinstance(ended, TerminalResult), ended
    assert ended.text == "the fleet is green"
    assert [ack.accepted for ack in acks] == [True]
    calls = [event for event in events if isinstance(event, EventToolCall)]
    results = [event for event in events if isinstance(event, EventToolResult)]
    assert [call.block.name for call in calls] == ["status"]
    assert [result.block.call_id for result in results] == ["tu_1"]
    assert json.loads(results[0].block.output)["argv"] == ["status"]


async def test_a_follow_up_with_the_token_continues_the_conversation(
    setup: Setup, served: Served, peer: NatsTransport
) -> None:
    setup.api.script([reply(text("the fleet is green")), reply(text("it was green"))])
    acks: list[Ack] = []
    first = await agent_of(peer).ask("how is the fleet", options=TurnOptions(on_ack=acks.append))
    assert isinstance(first, TerminalResult), first
    token = acks[0].conversation_token
    assert token

    second = await agent_of(peer).ask("and a moment ago", token=token)

    assert isinstance(second, TerminalResult), second
    assert second.text == "it was green"
    sent = json.dumps(setup.api.requests[-1]["messages"])
    assert "how is the fleet" in sent
    assert "the fleet is green" in sent
    assert "and a moment ago" in sent


async def test_a_prompt_beyond_the_workers_is_refused_and_the_drain_answers_the_running_one(
    setup: Setup, served: Served, peer: NatsTransport
) -> None:
    setup.api.script(
        [reply(tool_use("tu_1", "hold", {}), stop_reason="tool_use"), reply(text("held"))]
    )
    pid_fifo = open_pid_fifo(setup.hold_pid)
    holding = asyncio.ensure_future(agent_of(peer).ask("hold the fleet"))
    pid = await read_pid(pid_fifo, within=WAIT)
    try:
        refused_acks: list[Ack] = []
        refused = await agent_of(peer).ask(
            "how is the fleet", options=TurnOptions(on_ack=refused_acks.append)
        )
        assert isinstance(refused, TerminalError), refused
        assert refused.code == ErrorCode.CAPACITY
        assert [ack.accepted for ack in refused_acks] == [False]

        assert served.process.stderr is not None
        served.process.send_signal(signal.SIGINT)
        await asyncio.wait_for(line_after_operator_lines(served), WAIT)
        release(pid)

        held = await asyncio.wait_for(holding, WAIT)
        assert isinstance(held, TerminalResult), held
        assert held.text == "held"
        await asyncio.wait_for(served.process.wait(), WAIT)
        assert served.process.returncode == 0
    finally:
        kill_quietly(pid)


def test_a_prompts_config_without_a_model_fails_in_one_sentence_naming_the_key(
    tmp_path: Path, run_fisk: RunFisk
) -> None:
    config = tmp_path / "prompts.yaml"
    config.write_text(
        "identity: helper\n"
        "nats_context: test\n"
        "system_prompt: help\n"
        "expose:\n"
        "  agent:\n"
        "    a2a:\n"
        "      prompts: {}\n"
    )

    result = run_fisk("serve", "--config", str(config))

    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert '"llm.model" is required by expose.agent.a2a.prompts' in result.stderr


def test_a_slack_config_without_its_token_is_refused_naming_the_variable(
    tmp_path: Path, run_fisk: RunFisk
) -> None:
    config = tmp_path / "jobs.yaml"
    config.write_text(
        "identity: helper\n"
        "nats_context: test\n"
        "system_prompt: help\n"
        "llm:\n"
        "  model: claude-haiku-4-5\n"
        "expose:\n"
        "  agent:\n"
        "    a2a:\n"
        "      prompts: {}\n"
        "    slack: {}\n"
    )

    result = run_fisk(
        "serve", "--config", str(config), env={"SLACK_APP_TOKEN": "", "SLACK_BOT_TOKEN": ""}
    )

    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "expose.agent.slack needs SLACK_APP_TOKEN" in result.stderr


async def test_a_second_sigint_stops_at_once_and_tells_the_running_caller(
    setup: Setup, served: Served, peer: NatsTransport
) -> None:
    setup.api.script([reply(tool_use("tu_1", "hold", {}), stop_reason="tool_use")])
    pid_fifo = open_pid_fifo(setup.hold_pid)
    holding = asyncio.ensure_future(agent_of(peer).ask("hold the fleet"))
    pid = await read_pid(pid_fifo, within=WAIT)
    try:
        assert served.process.stderr is not None
        served.process.send_signal(signal.SIGINT)
        await asyncio.wait_for(line_after_operator_lines(served), WAIT)
        served.process.send_signal(signal.SIGINT)

        stopped = await asyncio.wait_for(holding, WAIT)
        assert isinstance(stopped, TerminalError), stopped
        assert stopped.code == ErrorCode.FAILED
        _, errors = await asyncio.wait_for(served.process.communicate(), WAIT)
        assert served.process.returncode == 130, errors.decode()
        assert "Traceback" not in errors.decode()
    finally:
        kill_quietly(pid)
