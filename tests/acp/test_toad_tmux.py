"""Toad driving `fisk acp` in a real terminal (tmux): a prompt answered, and a gated command
approved from Toad's permission dialog.

Every release of Toad (batrachian-toad on PyPI) needs Python 3.14 or later, so where `toad` is
not on PATH this test is skipped with that reason rather than run against a patched copy.
"""

from __future__ import annotations

import shlex
import shutil
import uuid
from pathlib import Path

import pytest

from tests.acp.driver import fleet
from tests.e2e.agent_runs import fisk_environment
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import runs_of
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.tui.tmux_pane import Pane

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        shutil.which("toad") is None,
        reason="Toad is not installed: every batrachian-toad release needs Python >= 3.14",
    ),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

ANSWER = "The cache is purged."


def test_toad_shows_the_answer_after_a_gated_command_is_approved(
    tmp_path: Path, tmux_environment: dict[str, str]
) -> None:
    home = fleet(tmp_path)
    turns = [reply(tool_use("tu_purge", "purge", {}), stop_reason="tool_use"), reply(text(ANSWER))]
    with FakeMessagesAPI(turns) as api:
        environment = {**fisk_environment(tmp_path, api), **tmux_environment}
        agent = shlex.join(
            [str(FISK), "acp", "--config", str(home.config), "--state-dir", str(home.state)]
        )
        pane = Pane(f"toad-{uuid.uuid4().hex[:8]}", environment)
        pane.tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "run", "-x", "120", "-y", "40",
            "-c", str(tmp_path), f"toad acp {shlex.quote(agent)} {shlex.quote(str(tmp_path))}",
        )  # fmt: skip
        try:
            pane.wait_until(lambda: "fisk" in pane.screen().lower(), "Toad to connect to fisk")
            pane.tmux("send-keys", "-t", "run", "purge the cache", "Enter")
            pane.wait_until(lambda: "Allow once" in pane.screen(), "the permission dialog")
            pane.tmux("send-keys", "-t", "run", "Enter")
            pane.wait_until(lambda: ANSWER in pane.screen(), "the answer")
        finally:
            pane.kill_server()
    assert runs_of(home.purge_log) == [["purge"]]
