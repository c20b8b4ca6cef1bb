"""A `fisk run` killed outright leaves nothing behind: no tool, no broker, no temporary files.

The run is SIGKILLed while its tool blocks (its pid comes through a fifo, so nothing waits on
time); the tool, the leader of its own process group, and the embedded broker die with the run,
and the run's temporary folder stays empty: the broker's configuration, token included, never
reached the disk.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from fisk_ai.broker.server import locate_server_binary
from tests.e2e.agent_runs import fisk_environment, write_config
from tests.e2e.resumable_runs import DRAIN_TURNS, drain_application, running_tool_pid, start_run
from tests.fakes.fiskapp import kill_quietly, wait_for_exit
from tests.fakes.messages_api import FakeMessagesAPI
from tests.patience import DEADLINE

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waiting on a pid needs pidfd_open"),
    pytest.mark.skipif(locate_server_binary() is None, reason="no nats-server binary"),
]


def _children_of(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(word) for word in children.read_text().split()] if children.exists() else []


async def test_a_killed_run_takes_its_tool_and_broker_with_it(tmp_path: Path) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    app, fifo = drain_application(tmp_path)
    config = write_config(tmp_path, application=app)
    tool_pid = 0
    with FakeMessagesAPI(DRAIN_TURNS) as api:
        env = fisk_environment(tmp_path, api, {"TMPDIR": str(temporary)})
        process = await start_run(tmp_path, config, env)
        try:
            tool_pid = await running_tool_pid(process, fifo)
            # fisk's other children: the embedded nats-server (the tool is in the list too).
            others = [pid for pid in _children_of(process.pid) if pid != tool_pid]
            process.kill()
            await process.wait()
            assert await wait_for_exit(tool_pid, within=DEADLINE), (
                f"the tool {tool_pid} outlived fisk"
            )
            for pid in others:
                assert await wait_for_exit(pid, within=DEADLINE), f"fisk's child {pid} outlived it"
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            if tool_pid:
                kill_quietly(tool_pid)
    assert process.returncode == -signal.SIGKILL
    assert list(temporary.iterdir()) == []
