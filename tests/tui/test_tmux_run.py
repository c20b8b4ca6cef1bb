"""The real `fisk run` full screen in an isolated tmux server: approve a gated command with keys,
read the screen back with capture-pane and the pane state from ``@fisk_state``."""

from __future__ import annotations

import shlex
import shutil
import uuid
from pathlib import Path

import pytest

from tests.e2e.agent_runs import fisk_environment, write_config
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.patience import DEADLINE
from tests.tui.tmux_pane import DONE_CHANNEL, Pane
from tests.tui.workstation import ops_model

# It drives the installed fisk in a real terminal, so it is end to end wherever it lives.
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_a_gated_command_is_approved_with_keys_in_a_real_terminal(
    tmp_path: Path, tmux_environment: dict[str, str]
) -> None:
    application = write_fake_app(tmp_path, ops_model(), name="ops")
    write_config(tmp_path, application=application, extra="identity: ops-agent\n")
    turns = [
        reply(tool_use("tu_1", "stream_rm", {"stream": "ORDERS"}), stop_reason="tool_use"),
        reply(text("ORDERS is gone")),
    ]
    with FakeMessagesAPI(turns) as api:
        # The answer after the approval waits, so the pane can be seen working on it.
        second_reply = api.hold(2)
        environment = {**fisk_environment(tmp_path, api), **tmux_environment}
        command = (
            f"{shlex.quote(str(FISK))} run remove ORDERS; echo EXIT=$?; "
            f"tmux wait-for -S {DONE_CHANNEL}; sleep 600"
        )
        pane = Pane(f"fisk-{uuid.uuid4().hex[:8]}", environment)
        pane.tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "run", "-x", "100", "-y", "30",
            "-c", str(tmp_path), command,
        )  # fmt: skip
        try:
            pane.wait_until(lambda: "Run this command?" in pane.screen(), "the approval modal")
            pane.wait_until(lambda: pane.state() == "blocked", "@fisk_state blocked")
            assert '"stream rm" carries tag "ai:confirm"' in pane.screen()
            # Keys reaching a question in its first moments are held back, not an answer.
            pane.wait_until(lambda: "keys:" in pane.screen(), "the approval to take keys")

            pane.tmux("send-keys", "-t", "run", "Right", "Enter")
            pane.wait_until(lambda: len(api.requests) == 2, "the model asked again")
            pane.wait_until(lambda: pane.state() == "working", "@fisk_state working")
            second_reply.set()
            pane.wait_until(lambda: "[awaiting input]" in pane.screen(), "the chat bar")
            screen = pane.screen()
            assert "-> stream rm -- ORDERS" in screen
            assert "ORDERS is gone" in screen
            pane.wait_until(lambda: pane.state() == "idle", "@fisk_state idle")

            pane.tmux("send-keys", "-t", "run", "C-d")
            pane.tmux("wait-for", DONE_CHANNEL, timeout=DEADLINE)
            after = pane.screen()
            session = after.split("resume with: fisk run --resume ", 1)[1].split()[0]

            # Continuing it in another window reads the conversation back before the chat bar.
            resumed = Pane(pane.label, environment, target="resumed")
            pane.tmux(
                "new-window", "-d", "-n", "resumed", "-t", "run", "-c", str(tmp_path),
                f"{shlex.quote(str(FISK))} run --resume {shlex.quote(session)}; sleep 600",
            )  # fmt: skip
            resumed.wait_until(
                lambda: "[awaiting input]" in resumed.screen(), "the resumed chat bar"
            )
            read_back = resumed.screen()
        finally:
            second_reply.set()
            pane.kill_server()
    assert "ORDERS is gone" in after
    assert "Run summary: session=" in after
    assert "resume with: fisk run --resume" in after
    assert "EXIT=0" in after
    assert "> remove ORDERS" in read_back
    assert "ORDERS is gone" in read_back
    assert f'--- resuming "{session}" ---' in read_back
    # The turn had been answered: resuming it asked the model nothing more.
    assert len(api.requests) == 2


def test_the_pane_says_working_while_the_agent_starts(
    tmp_path: Path, tmux_environment: dict[str, str]
) -> None:
    # An application that never answers its introspection keeps the run starting up.
    application = write_fake_app(tmp_path, ops_model(), name="ops", behaviour="hang-on-introspect")
    write_config(tmp_path, application=application, extra="identity: ops-agent\n")
    with FakeMessagesAPI([reply(text("never asked"))]) as api:
        environment = {**fisk_environment(tmp_path, api), **tmux_environment}
        pane = Pane(f"fisk-{uuid.uuid4().hex[:8]}", environment)
        pane.tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "run", "-x", "80", "-y", "24",
            "-c", str(tmp_path), f"{shlex.quote(str(FISK))} run hello; sleep 600",
        )  # fmt: skip
        try:
            pane.wait_until(lambda: pane.state() == "working", "@fisk_state working")
            assert "fisk-ai" in pane.screen()
            assert not api.requests
        finally:
            pane.kill_server()
