"""Stopping the installed `fisk run` as an operator does.

Full screen, in a real terminal (tmux): a SIGTERM is the first Ctrl-C followed by leaving. The
model call in flight is cancelled at once; a command already running finishes and its result is
journaled; the app then leaves the alternate screen and reprints the summary and the resume
hint on the normal buffer.

In line mode, on a pseudo-terminal: end of input (Ctrl-D) at an approval or an ask_human question
ends the run suspended, the question given up rather than answered, as the user guide says.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pty
import select
import shlex
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fisk_ai.sessions import FileSessionStore, fold
from fisk_ai.sessions.records import Decision, Record, Terminal, TerminalReason, ToolResult
from tests.e2e.agent_runs import (
    command_output,
    fisk_environment,
    session_id_of,
    tool_results,
    write_config,
)
from tests.e2e.conftest import FISK
from tests.e2e.resumable_runs import ANSWER, DRAIN_TURNS, PROMPT, drain_application, resume
from tests.fakes.fiskapp import kill_quietly, release, runs_of, write_fake_app
from tests.fakes.messages_api import reply, text, tool_use
from tests.fakes.watched_messages_api import HANG_GUARD, WatchedMessagesAPI
from tests.patience import DEADLINE
from tests.tui.tmux_pane import Pane
from tests.tui.workstation import ops_model

DONE_CHANNEL = "fisk-stop-done"
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


# Full screen, in tmux.

RESUME_HINT = "resume with: fisk run --state-dir sessions --resume "
"""The hint a full-screen run below prints before its session id: its --config is the default."""


@contextlib.contextmanager
def full_screen_run(
    home: Path, environment: dict[str, str], prompt: str
) -> Iterator[tuple[Pane, int]]:
    """`fisk run PROMPT` full screen in its own tmux server; yields the pane and fisk's pid."""
    command = (
        f"{shlex.quote(str(FISK))} run --state-dir sessions --config agent.yaml "
        f"{shlex.quote(prompt)}; echo EXIT=$?; tmux wait-for -S {DONE_CHANNEL}; sleep 600"
    )
    pane = Pane(f"fisk-{uuid.uuid4().hex[:8]}", environment)
    pane.tmux(
        "-f", "/dev/null", "new-session", "-d", "-s", "run", "-x", "100", "-y", "30",
        "-c", str(home), command,
    )  # fmt: skip
    try:
        shell = int(pane.tmux("display-message", "-p", "-t", "run", "#{pane_pid}").strip())
        yield pane, child_of(shell)
    finally:
        pane.kill_server()


def child_of(shell: int) -> int:
    """The one process the pane's shell is running: fisk."""
    children = Path(f"/proc/{shell}/task/{shell}/children")
    deadline = time.monotonic() + DEADLINE
    while not children.read_text().split():
        if time.monotonic() > deadline:
            raise AssertionError("the pane's shell never started fisk")
        time.sleep(0.01)
    return int(children.read_text().split()[0])


def pid_from(fifo: int) -> int:
    """The pid the blocked command writes into its fifo once it runs."""
    received = bytearray()
    deadline = time.monotonic() + DEADLINE
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError("the command never ran")
        readable, _, _ = select.select([fifo], [], [], remaining)
        if not readable:
            continue
        chunk = os.read(fifo, 64)
        if chunk:
            received.extend(chunk)
        elif received:
            os.close(fifo)
            return int(received)


def journal(directory: Path, session: str) -> list[Record]:
    return list(asyncio.run(FileSessionStore(directory).read(session)))


def left_alternate_screen(pane: Pane) -> bool:
    return pane.tmux("display-message", "-p", "-t", "run", "#{alternate_on}").strip() == "0"


@needs_tmux
def test_sigterm_while_a_command_runs_lets_it_finish_then_leaves_with_the_terminal_restored(
    tmp_path: Path, tmux_environment: dict[str, str]
) -> None:
    application, fifo = drain_application(tmp_path)
    write_config(tmp_path, application=application)
    tool_pid = 0
    with WatchedMessagesAPI(DRAIN_TURNS) as api:
        environment = {**fisk_environment(tmp_path, api), **tmux_environment}
        with full_screen_run(tmp_path, environment, PROMPT) as (pane, fisk_pid):
            try:
                tool_pid = pid_from(fifo)
                os.kill(fisk_pid, signal.SIGTERM)
                pane.wait_until(lambda: "suspending" in pane.screen(), "the stop in the status bar")
                release(tool_pid)
                pane.tmux("wait-for", DONE_CHANNEL, timeout=DEADLINE)
                after = pane.screen()
                restored = left_alternate_screen(pane)
            finally:
                if tool_pid:
                    kill_quietly(tool_pid)
        session = after.split(RESUME_HINT, 1)[1].split()[0]
        records = journal(tmp_path / "sessions", session)
        resumed = resume(tmp_path, session, fisk_environment(tmp_path, api))

    assert restored
    assert "Run suspended: session=" in after
    assert "EXIT=130" in after
    conversation = fold(records)
    assert conversation.pending == () and conversation.pending_turn is None
    (result,) = [record.payload for record in records if isinstance(record.payload, ToolResult)]
    assert command_output(result.result.content) == "started\nreleased\n"
    assert records[-1].payload == Terminal(TerminalReason.SUSPENDED)
    # The resume sent the journaled result on and ran nothing again.
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == ANSWER + "\n"
    assert runs_of(tmp_path / "runs") == [["drain", "--", "n1"]]
    assert command_output(tool_results(api.requests[-1])["tu_drain"]) == "started\nreleased\n"


@needs_tmux
def test_sigterm_during_a_model_call_that_never_answers_leaves_at_once(
    tmp_path: Path, tmux_environment: dict[str, str]
) -> None:
    write_config(tmp_path, application=write_fake_app(tmp_path, ops_model(), name="ops"))
    with WatchedMessagesAPI([reply(text("never read"))]) as api:
        api.hold(1)
        environment = {**fisk_environment(tmp_path, api), **tmux_environment}
        with full_screen_run(tmp_path, environment, "how is it going") as (pane, fisk_pid):
            pane.wait_until(lambda: len(api.requests) == 1, "the model call")
            os.kill(fisk_pid, signal.SIGTERM)
            pane.tmux("wait-for", DONE_CHANNEL, timeout=DEADLINE)
            after = pane.screen()
            restored = left_alternate_screen(pane)
        session = after.split(RESUME_HINT, 1)[1].split()[0]
        records = journal(tmp_path / "sessions", session)

    assert restored
    assert "Run suspended: session=" in after and "EXIT=130" in after
    assert fold(records).llm_calls == 0
    assert records[-1].payload == Terminal(TerminalReason.SUSPENDED)


# Line mode, on a pseudo-terminal.


@dataclass
class LineRun:
    """`fisk run --no-tui` with stdin and stderr on a pseudo-terminal, stdout on a pipe."""

    process: subprocess.Popen[bytes]
    controller: int
    shown: bytearray

    def read_until(self, wanted: str) -> None:
        deadline = time.monotonic() + HANG_GUARD
        while wanted.encode() not in self.shown:
            if time.monotonic() > deadline or not self._read(deadline):
                raise AssertionError(f"never shown: {wanted!r}; the terminal:\n{self.text}")

    def type(self, data: bytes) -> None:
        os.write(self.controller, data)

    def finish(self) -> tuple[int, str]:
        """Read the terminal until fisk is gone; its exit status and everything on stdout."""
        deadline = time.monotonic() + HANG_GUARD
        while self._read(deadline):
            if time.monotonic() > deadline:
                raise AssertionError(f"fisk did not end; the terminal:\n{self.text}")
        assert self.process.stdout is not None
        stdout = self.process.stdout.read().decode()
        return self.process.wait(timeout=HANG_GUARD), stdout

    @property
    def text(self) -> str:
        return self.shown.decode(errors="replace").replace("\r\n", "\n")

    def _read(self, deadline: float) -> bool:
        """Take what the terminal shows before ``deadline``; False once it has closed."""
        readable, _, _ = select.select(
            [self.controller], [], [], max(deadline - time.monotonic(), 0)
        )
        if not readable:
            return True
        try:
            chunk = os.read(self.controller, 65536)
        except OSError:  # every end of the terminal is closed: fisk is gone
            return False
        self.shown.extend(chunk)
        return bool(chunk)


@contextlib.contextmanager
def line_run(home: Path, environment: dict[str, str], prompt: str) -> Iterator[LineRun]:
    controller, terminal = pty.openpty()
    state, config = str(home / "sessions"), str(home / "agent.yaml")
    process = subprocess.Popen(
        [str(FISK), "run", "--no-tui", "--state-dir", state, "--config", config, prompt],
        cwd=home,
        env={**environment, "COLUMNS": "100"},
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=terminal,
    )
    os.close(terminal)
    try:
        yield LineRun(process, controller, bytearray())
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        os.close(controller)


END_OF_INPUT = b"\x04"


def test_end_of_input_at_an_approval_ends_the_run_suspended_without_a_decline(
    tmp_path: Path,
) -> None:
    write_config(tmp_path, application=write_fake_app(tmp_path, ops_model(), name="ops"))
    turns = [reply(tool_use("tu_rm", "stream_rm", {"stream": "ORDERS"}), stop_reason="tool_use")]
    with WatchedMessagesAPI(turns) as api:
        with line_run(tmp_path, fisk_environment(tmp_path, api), "remove ORDERS") as run:
            run.read_until("Choice [1]: ")
            run.type(END_OF_INPUT)
            status, stdout = run.finish()
        requests = len(api.requests)
    shown = run.text
    session = session_id_of(shown)
    records = journal(tmp_path / "sessions", session)

    assert status == 130, shown
    assert stdout == ""
    assert "Run suspended: session=" in shown
    assert "interrupted a question, which is not an answer" in shown
    assert requests == 1
    payloads = [record.payload for record in records]
    assert not [payload for payload in payloads if isinstance(payload, ToolResult | Decision)]
    assert [call.id for call in fold(records).pending] == ["tu_rm"]
    assert isinstance(payloads[-1], Terminal)
    assert payloads[-1].reason is TerminalReason.SUSPENDED


def test_end_of_input_at_an_ask_human_question_ends_the_run_suspended_unanswered(
    tmp_path: Path,
) -> None:
    write_config(
        tmp_path,
        application=write_fake_app(tmp_path, ops_model(), name="ops"),
        extra="harness:\n  human_in_the_loop: {enabled: true}\n",
    )
    question = {"question": "Shall I remove ORDERS?"}
    turns = [reply(tool_use("tu_ask", "ask_human_confirm", question), stop_reason="tool_use")]
    with WatchedMessagesAPI(turns) as api:
        with line_run(tmp_path, fisk_environment(tmp_path, api), "remove ORDERS") as run:
            run.read_until("Shall I remove ORDERS? [y/N]: ")
            run.type(END_OF_INPUT)
            status, _ = run.finish()
        requests = len(api.requests)
    shown = run.text
    records = journal(tmp_path / "sessions", session_id_of(shown))

    assert status == 130, shown
    assert "Run suspended: session=" in shown
    assert "the operator answered no" not in shown
    assert requests == 1
    assert not [record for record in records if isinstance(record.payload, ToolResult)]
    assert [call.id for call in fold(records).pending] == ["tu_ask"]
