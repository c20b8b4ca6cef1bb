"""A server that hangs in the handshake costs the run its ``timeout`` and no more (user guide,
"Timeouts"): the start is abandoned at the timeout and the stdio child killed at once, not
given the grace to leave that an ordinary close gives it, since it has already had its time.
How long it takes is measured, not asserted (docs/mcp.md gives the figures)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.e2e.agent_runs import fisk, fisk_environment, write_config
from tests.fakes.messages_api import FakeMessagesAPI, reply, text
from tests.patience import slowdown

pytestmark = pytest.mark.e2e

HUNG_SERVER = Path(__file__).resolve().parent / "hung_server.py"
# Long enough for a loaded machine to start the child and deliver its initialize request; the
# run then waits the rest of it out, once.
TIMEOUT_SECONDS = round(5 * slowdown())


def test_a_server_hung_in_the_handshake_fails_the_run_at_the_timeout_and_is_killed(
    tmp_path: Path,
) -> None:
    record = tmp_path / "hung.pid"
    entry = (
        "mcp_clients:\n"
        "  - name: hung\n"
        f"    command: {sys.executable}\n"
        f"    args: ['{HUNG_SERVER}', '{record}']\n"
        f"    timeout: {TIMEOUT_SECONDS}s\n"
    )
    config = write_config(tmp_path, extra=entry)
    with FakeMessagesAPI([reply(text("never sent"))]) as api:
        ran = fisk(
            "run",
            "--no-tui",
            "--config",
            str(config),
            "hello",
            cwd=tmp_path,
            env=fisk_environment(tmp_path, api),
        )
        assert api.requests == []

    assert ran.returncode == 1
    assert (
        f'MCP server "hung" ({sys.executable} {HUNG_SERVER} {record}) did not start and answer '
        f"the handshake: no answer within {TIMEOUT_SECONDS}s (mcp_clients timeout)"
    ) in ran.stderr
    # The server had the initialize request and sat on it.
    pid = int(record.read_text())
    # It was killed, not asked to leave: its SIGTERM handler never ran, and it is gone.
    assert not record.with_name(record.name + ".term").exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
