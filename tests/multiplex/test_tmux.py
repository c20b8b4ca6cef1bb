"""The tmux adapter and the documented status-line snippet against a real, isolated tmux server."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fisk_ai.multiplex import PaneState, Reporter, TmuxPane, detect
from tests.patience import DEADLINE

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

DOCS = Path(__file__).resolve().parents[2] / "docs" / "multiplex.md"


@dataclass(frozen=True)
class Server:
    socket_path: str

    def tmux(self, *arguments: str) -> str:
        completed = subprocess.run(
            ["tmux", "-S", self.socket_path, *arguments],
            capture_output=True,
            text=True,
            check=True,
            timeout=DEADLINE,
            stdin=subprocess.DEVNULL,
        )
        return completed.stdout.rstrip("\n")

    def new_pane(self) -> dict[str, str]:
        """A new window running sleep, and the environment fisk would see inside its pane."""
        pane_id = self.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sleep 600")
        server = self.tmux("display", "-p", "-t", pane_id, "#{socket_path},#{pid},0")
        return {"TMUX": server, "TMUX_PANE": pane_id}


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("TMUX")}
    environ["TMUX_TMPDIR"] = str(tmp_path_factory.mktemp("tmux"))
    label = f"fisk-{uuid.uuid4().hex[:8]}"
    session = ["new-session", "-d", "-s", "work", "-x", "120", "-y", "20", "sleep 600"]
    subprocess.run(
        ["tmux", "-L", label, "-f", "/dev/null", *session],
        env=environ,
        check=True,
        timeout=DEADLINE,
        stdin=subprocess.DEVNULL,
    )
    socket_path = subprocess.run(
        ["tmux", "-L", label, "display", "-p", "#{socket_path}"],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
        timeout=DEADLINE,
    ).stdout.strip()
    running = Server(socket_path=socket_path)
    try:
        yield running
    finally:
        subprocess.run(
            ["tmux", "-S", socket_path, "kill-server"], check=False, capture_output=True, timeout=10
        )


def _state(server: Server, pane_id: str) -> str:
    return server.tmux("show-options", "-w", "-v", "-t", pane_id, "@fisk_state")


def _reason(server: Server, pane_id: str) -> str:
    return server.tmux("display", "-p", "-t", pane_id, "#{@fisk_reason}")


def _title(server: Server, pane_id: str) -> str:
    return server.tmux("display", "-p", "-t", pane_id, "#{pane_title}")


async def test_the_pane_reads_blocked_then_working_then_idle(server: Server) -> None:
    environ = server.new_pane()
    pane_id = environ["TMUX_PANE"]
    multiplexer = detect(environ)
    assert isinstance(multiplexer, TmuxPane)
    reporter = Reporter("release-bot", multiplexer)

    reporter.report(PaneState.BLOCKED, "approve: git push\norigin main")
    await reporter.flush()
    assert _state(server, pane_id) == "blocked"
    assert _reason(server, pane_id) == "approve: git push origin main"
    assert _title(server, pane_id) == "fisk:release-bot blocked"

    reporter.report(PaneState.WORKING)
    await reporter.flush()
    assert _state(server, pane_id) == "working"
    assert _reason(server, pane_id) == ""
    assert _title(server, pane_id) == "fisk:release-bot working"

    reporter.report(PaneState.IDLE)
    await reporter.flush()
    assert _state(server, pane_id) == "idle"
    assert _title(server, pane_id) == "fisk:release-bot idle"


async def test_closing_gives_the_pane_its_title_back(server: Server) -> None:
    environ = server.new_pane()
    pane_id = environ["TMUX_PANE"]
    server.tmux("select-pane", "-t", pane_id, "-T", "build #1; logs")
    multiplexer = detect(environ)
    assert isinstance(multiplexer, TmuxPane)
    reporter = Reporter("release-bot", multiplexer)
    reporter.report(PaneState.BLOCKED, "approve: git push")
    reporter.report(PaneState.IDLE)
    await reporter.aclose()
    assert _title(server, pane_id) == "build #1; logs"
    assert server.tmux("display", "-p", "-t", pane_id, "#{@fisk_state}#{@fisk_reason}") == ""


async def test_tmux_syntax_in_a_label_or_reason_stays_text(server: Server, tmp_path: Path) -> None:
    environ = server.new_pane()
    pane_id = environ["TMUX_PANE"]
    planted = tmp_path / "planted"
    reporter = Reporter("#{pane_id}#(echo hi)", detect(environ))
    reporter.report(PaneState.BLOCKED, f"-u #(touch {planted}) #{{pane_id}} ;")
    await reporter.flush()
    assert _title(server, pane_id) == "fisk:#{pane_id}#(echo hi) blocked"
    assert _reason(server, pane_id) == f"-u #(touch {planted}) #{{pane_id}} ;"
    assert not planted.exists()


async def test_a_vanished_server_is_dropped_quietly(server: Server) -> None:
    environ = server.new_pane()
    server.tmux("kill-server")
    reporter = Reporter("alpha", detect(environ))
    reporter.report(PaneState.WORKING)
    await reporter.aclose()


def _docs_block(language: str) -> str:
    found = re.search(rf"```{language}\n(.*?)```", DOCS.read_text(), re.DOTALL)
    assert found is not None, f"docs/multiplex.md has no {language} block"
    return found.group(1)


async def test_the_documented_status_line_shows_each_agent_state(
    server: Server, tmp_path: Path
) -> None:
    blocked_pane = server.new_pane()
    server.new_pane()
    working_pane = server.new_pane()
    blocked = Reporter("alpha", detect(blocked_pane))
    working = Reporter("beta", detect(working_pane))
    blocked.report(PaneState.BLOCKED, "approve: make release, then tag")
    working.report(PaneState.WORKING)
    await blocked.flush()
    await working.flush()

    config = tmp_path / "fisk.tmux.conf"
    config.write_text(_docs_block("tmux"))
    server.tmux("source-file", str(config))

    blocked_window = server.tmux("display", "-p", "-t", blocked_pane["TMUX_PANE"], "#I")
    working_window = server.tmux("display", "-p", "-t", working_pane["TMUX_PANE"], "#I")
    status_right = server.tmux("show-options", "-g", "-v", "status-right")
    assert server.tmux("display", "-p", "-t", "work", status_right) == (
        f"{blocked_window}:blocked {working_window}:working "
    )
    window_status = server.tmux("show-options", "-g", "-v", "window-status-format")
    rendered_blocked = server.tmux("display", "-p", "-t", blocked_pane["TMUX_PANE"], window_status)
    rendered_working = server.tmux("display", "-p", "-t", working_pane["TMUX_PANE"], window_status)
    assert rendered_blocked.endswith(" [needs you]")
    assert "[needs you]" not in rendered_working


async def test_the_documented_pane_list_names_every_agent(server: Server) -> None:
    blocked_pane = server.new_pane()
    server.new_pane()
    working_pane = server.new_pane()
    blocked = Reporter("alpha", detect(blocked_pane))
    working = Reporter("beta", detect(working_pane))
    blocked.report(PaneState.BLOCKED, "approve: make release, then tag")
    working.report(PaneState.WORKING)
    await blocked.flush()
    await working.flush()

    command = shlex.split(_docs_block("sh").strip())
    assert command[0] == "tmux"
    listed = server.tmux(*command[1:]).splitlines()
    assert [line.split(" ", 1)[1] for line in listed] == [
        "fisk:alpha blocked - approve: make release, then tag",
        "fisk:beta working",
    ]
