"""`fisk serve` connects each MCP server once and every run it hosts shares the session (user
guide, "Seeing what a server offers"): two prompts, two runs, one stdio server process."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys

from fisk_ai.a2a.messages import EventMessage, EventToolResult, TerminalResult, UnknownEvent
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.prompts_client import TurnOptions
from tests.e2e.conftest import FISK
from tests.e2e.served_prompts import SERVED_PROMPTS_MARKS, WAIT, Setup, agent_of
from tests.fakes.messages_api import reply, text, tool_use
from tests.mcp.conftest import ECHO_SERVER

pytestmark = SERVED_PROMPTS_MARKS

STARTED = "echo server starting"


async def pid_reported_by_a_run(peer: NatsTransport, prompt: str) -> str:
    events: list[EventMessage | UnknownEvent] = []
    ended = await agent_of(peer).ask(prompt, options=TurnOptions(on_event=events.append))
    assert isinstance(ended, TerminalResult), ended
    (result,) = [event for event in events if isinstance(event, EventToolResult)]
    return result.block.output


async def test_two_hosted_runs_share_one_mcp_server_process(
    setup: Setup, peer: NatsTransport
) -> None:
    with setup.config.open("a") as config:
        config.write(
            "mcp_clients:\n"
            "  - name: echo\n"
            f"    command: {sys.executable}\n"
            f"    args: ['{ECHO_SERVER}']\n"
            f"    env: {{ECHO_STDERR: {STARTED}}}\n"
            "    include: {tools: ['^pid$']}\n"
        )
    setup.api.script(
        [
            reply(tool_use("tu_1", "echo_pid", {}), stop_reason="tool_use"),
            reply(text("first")),
            reply(tool_use("tu_2", "echo_pid", {}), stop_reason="tool_use"),
            reply(text("second")),
        ]
    )
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
        # The banner is written once the endpoints listen.
        while b"Workers:" not in await asyncio.wait_for(process.stdout.readline(), WAIT):
            pass

        first = await pid_reported_by_a_run(peer, "which server answers")
        second = await pid_reported_by_a_run(peer, "and now")

        process.send_signal(signal.SIGINT)
        _, stderr = await asyncio.wait_for(process.communicate(), WAIT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    assert first.isdigit(), first
    assert first == second
    assert stderr.decode().count(STARTED) == 1
