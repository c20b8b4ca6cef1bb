"""Runs of the installed fisk that are stopped mid-turn and resumed: the application that drains,
the run started, the tool's process found, the resume."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from tests.e2e.agent_runs import fisk
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import (
    application,
    arg,
    blocks_first_run,
    command,
    logged,
    open_pid_fifo,
    read_pid,
    write_fake_app,
)
from tests.fakes.messages_api import reply, text, tool_use
from tests.patience import DEADLINE

PROMPT = "drain node n1"
ANSWER = "Node n1 is drained."
DRAIN_TURNS = [
    reply(tool_use("tu_drain", "drain", {"node": "n1"}), stop_reason="tool_use"),
    reply(text(ANSWER)),
]


def drain_application(home: Path) -> tuple[Path, int]:
    """The fake application and the read end of the fifo its blocked command writes its pid to."""
    fifo = open_pid_fifo(home / "drain.pid")
    action = logged(blocks_first_run(home / "drain.pid", home / "drain.started"), home / "runs")
    model = application(
        "fleet",
        commands=[command("drain", "Drain a node", args=[arg("node", "Node")], action=action)],
    )
    return write_fake_app(home, model, name="fleet"), fifo


async def start_run(home: Path, config: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        str(FISK),
        "run",
        "--no-tui",
        "--state-dir",
        str(home / "sessions"),
        "--config",
        str(config),
        PROMPT,
        cwd=home,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def finished(
    process: asyncio.subprocess.Process, stderr_so_far: str = ""
) -> subprocess.CompletedProcess[str]:
    stdout, stderr = await asyncio.wait_for(process.communicate(), DEADLINE)
    assert process.returncode is not None
    return subprocess.CompletedProcess(
        [], process.returncode, stdout.decode(), stderr_so_far + stderr.decode()
    )


async def running_tool_pid(process: asyncio.subprocess.Process, fifo: int) -> int:
    """The pid of the blocked command, once it runs; fails at once should fisk end first."""
    pid = asyncio.ensure_future(read_pid(fifo, within=DEADLINE))
    exited = asyncio.ensure_future(process.wait())
    await asyncio.wait({pid, exited}, return_when=asyncio.FIRST_COMPLETED)
    if pid.done():
        exited.cancel()
        return pid.result()
    pid.cancel()
    ended = await finished(process)
    raise AssertionError(f"fisk ended ({ended.returncode}) before the tool ran:\n{ended.stderr}")


def resume(home: Path, session: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return fisk(
        "run",
        "--no-tui",
        "--state-dir",
        str(home / "sessions"),
        "--config",
        str(home / "agent.yaml"),
        "--resume",
        session,
        cwd=home,
        env=env,
    )
