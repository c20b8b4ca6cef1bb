"""The installed `fisk run` opening in a real terminal: its first frame comes before the broker
is up, what is typed during startup is sent after the first turn, and a failure while hosting
ends the app with one sentence."""

from __future__ import annotations

import shlex
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from fisk_ai.workstation.host import FIRST_FRAME_FILE
from tests.e2e.agent_runs import fisk_environment, write_config
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, reply, text
from tests.patience import DEADLINE
from tests.tui.tmux_pane import DONE_CHANNEL, Pane
from tests.tui.workstation import ops_model

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll another process's output until ``condition`` holds."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def descendants(pid: int) -> list[str]:
    """The command names of every process below ``pid``."""
    parents: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text()
        except OSError:
            continue
        child = int(stat.parent.name)
        names[child] = fields[fields.index("(") + 1 : fields.rindex(")")]
        parent = int(fields[fields.rindex(")") + 2 :].split()[1])
        parents.setdefault(parent, []).append(child)
    found, stack = [], list(parents.get(pid, []))
    while stack:
        child = stack.pop()
        found.append(names[child])
        stack += parents.get(child, [])
    return found


def start(pane: Pane, directory: Path, arguments: str) -> None:
    command = (
        f"{shlex.quote(str(FISK))} run {arguments}; echo EXIT=$?; "
        f"tmux wait-for -S {DONE_CHANNEL}; sleep 600"
    )
    pane.tmux(
        "-f", "/dev/null", "new-session", "-d", "-s", "run", "-x", "100", "-y", "30",
        "-c", str(directory), command,
    )  # fmt: skip


def test_the_first_frame_comes_before_the_broker_and_type_ahead_is_sent_after(
    tmp_path: Path, tmux_environment: dict[str, str]
) -> None:
    application = write_fake_app(tmp_path, ops_model(), name="ops")
    write_config(tmp_path, application=application, extra="identity: ops-agent\n")
    frame_mark = tmp_path / "first-frame"
    with FakeMessagesAPI([reply(text("first answer")), reply(text("second answer"))]) as api:
        environment = {
            **fisk_environment(tmp_path, api, extra={FIRST_FRAME_FILE: str(frame_mark)}),
            **tmux_environment,
        }
        pane = Pane(f"fisk-{uuid.uuid4().hex[:8]}", environment)
        start(pane, tmp_path, "hello")
        try:
            wait_for(frame_mark.exists, "the first frame")
            shell = int(pane.tmux("display-message", "-p", "-t", "run", "#{pane_pid}").strip())
            at_first_frame = descendants(shell)
            # Typed while the agent is still being hosted.
            pane.tmux("send-keys", "-t", "run", "-l", "why")
            pane.tmux("send-keys", "-t", "run", "Enter")
            pane.wait_until(lambda: "second answer" in pane.screen(), "the type-ahead's answer")
            pane.tmux("send-keys", "-t", "run", "C-d")
            pane.tmux("wait-for", DONE_CHANNEL, timeout=DEADLINE)
            after = pane.screen()
        finally:
            pane.kill_server()
    assert "fisk" in " ".join(at_first_frame)
    assert "nats-server" not in at_first_frame
    assert len(api.requests) == 2
    assert "why" in str(api.requests[1])
    assert "EXIT=0" in after


def test_a_failure_while_hosting_ends_the_app_with_one_sentence(
    tmp_path: Path, tmux_environment: dict[str, str]
) -> None:
    broken = tmp_path / "broken-app"
    broken.write_text("#!/bin/sh\necho 'no introspection here' >&2\nexit 3\n")
    broken.chmod(0o755)
    write_config(tmp_path, application=broken, extra="identity: ops-agent\n")
    frame_mark = tmp_path / "first-frame"
    environment = {
        **fisk_environment(tmp_path, extra={FIRST_FRAME_FILE: str(frame_mark)}),
        **tmux_environment,
        "ANTHROPIC_API_KEY": "unused",
    }
    pane = Pane(f"fisk-{uuid.uuid4().hex[:8]}", environment)
    start(pane, tmp_path, "hello")
    try:
        pane.tmux("wait-for", DONE_CHANNEL, timeout=DEADLINE)
        after = pane.screen()
    finally:
        pane.kill_server()
    assert frame_mark.exists()  # the screen was up when hosting failed
    assert "EXIT=1" in after
    # One sentence, wrapped by the pane: the error line and nothing else before the exit code.
    told = "".join(line for line in after.splitlines() if "EXIT=" not in line).strip()
    assert told.startswith("fisk: error: application_path"), after
    assert told.endswith("when asked for --fisk-introspect: no introspection here"), after
    assert told.count("fisk: error") == 1
