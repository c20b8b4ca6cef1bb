"""`fisk run --no-tui` showing each model turn's text as it is written, through the installed
command, the real anthropic SDK and the fake Messages API streaming in small chunks.

The terminal is a pty the test reads; stdout is either that pty or a pipe. A test that needs
text on the screen before the model call ends holds the fake's stream part way (``pause``) and
waits for the first chunk on the pty before it lets the stream go on.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.agent_runs import fisk_environment, write_config
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import application, arg, command, write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, Turn, reply, text, tool_use
from tests.lineui.terminal_screen import screen
from tests.patience import DEADLINE

PROMPT = "report on the environment"
NARRATION = "Checking the environment first."
ANSWER = "# Report\n\nThe cache is **untouched** and the fleet is healthy.\n\n- one\n- two"
FIRST_CHUNK = ANSWER[:8]
CHUNK = 8
OPENING_EVENTS = 3
"""message_start, ping and content_block_start come before the first text delta."""

NARRATED_TURNS = [
    reply(text(NARRATION), tool_use("tu_show", "show", {"what": "env"}), stop_reason="tool_use"),
    reply(text(ANSWER), chunk=CHUNK),
]


@dataclass
class TerminalRun:
    """A `fisk run` whose stderr (and maybe stdout) is a pty: what the screen received."""

    process: subprocess.Popen[bytes]
    controller: int
    screen: bytearray

    def read_until(self, wanted: Callable[[bytes], bool]) -> None:
        """Read the pty until ``wanted`` holds for what it received; a hang fails the test."""
        give_up = time.monotonic() + DEADLINE
        while not wanted(bytes(self.screen)):
            left = give_up - time.monotonic()
            assert left > 0, f"the terminal never showed what was awaited:\n{self.screen!r}"
            ready, _, _ = select.select([self.controller], [], [], left)
            if ready and not self._read():
                raise AssertionError(f"the run ended before that was shown:\n{self.screen!r}")

    def finish(self) -> tuple[int, bytes]:
        """Read to the end; the exit code and stdout (empty when stdout is the pty)."""
        while self._read():
            pass
        stdout = self.process.stdout.read() if self.process.stdout is not None else b""
        return self.process.wait(timeout=DEADLINE), stdout

    def rows(self) -> list[str]:
        """What the 80-column terminal shows now."""
        return screen(self.screen.decode())

    def _read(self) -> bool:
        try:
            chunk = os.read(self.controller, 65536)
        except OSError:  # EIO: every holder of the terminal closed it
            return False
        self.screen.extend(chunk)
        return bool(chunk)


def fleet_config(home: Path) -> Path:
    app = write_fake_app(
        home,
        application("fleet", commands=[command("show", "Show", args=[arg("what", "What")])]),
        name="fleet",
    )
    return write_config(home, application=app)


@contextmanager
def on_terminal(
    home: Path,
    api: FakeMessagesAPI,
    *flags: str,
    stdout_piped: bool = False,
    extra_env: Mapping[str, str] | None = None,
) -> Iterator[TerminalRun]:
    """`fisk run --no-tui FLAGS PROMPT` with stderr on an 80x24 pty (stdout too, unless
    ``stdout_piped``)."""
    config = fleet_config(home)
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen(
        [str(FISK), "run", "--no-tui", *flags, "--config", str(config), PROMPT],
        cwd=home,
        env={**fisk_environment(home, api), **(extra_env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if stdout_piped else terminal,
        stderr=terminal,
    )
    os.close(terminal)
    try:
        yield TerminalRun(process, controller, bytearray())
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        os.close(controller)


def test_the_answer_shows_on_the_terminal_before_the_model_call_ends(tmp_path: Path) -> None:
    with FakeMessagesAPI([reply(text(ANSWER), chunk=CHUNK)]) as api:
        rest = api.pause(1, after=OPENING_EVENTS + 1)
        with on_terminal(tmp_path, api) as run:
            run.read_until(lambda screen: FIRST_CHUNK.encode() in screen)
            assert api.events_sent(1) == OPENING_EVENTS + 1
            rest.set()
            code, _ = run.finish()
    assert code == 0
    shown = "\n".join(run.rows())
    assert shown.count("untouched") == 1
    assert "**" not in shown


def test_piped_stdout_shows_the_narration_on_the_terminal_as_it_is_written(
    tmp_path: Path,
) -> None:
    turns = [
        reply(
            text(NARRATION),
            tool_use("tu_show", "show", {"what": "env"}),
            stop_reason="tool_use",
            chunk=CHUNK,
        ),
        reply(text(ANSWER), chunk=CHUNK),
    ]
    with FakeMessagesAPI(turns) as api:
        rest = api.pause(1, after=OPENING_EVENTS + 1)
        with on_terminal(tmp_path, api, stdout_piped=True) as run:
            run.read_until(lambda screen: NARRATION[:CHUNK].encode() in screen)
            assert NARRATION.encode() not in run.screen
            rest.set()
            code, stdout = run.finish()
    assert code == 0
    assert stdout.decode() == ANSWER + "\n"


def test_piped_stdout_is_exactly_the_answer_with_the_narration_left_on_the_terminal(
    tmp_path: Path,
) -> None:
    with (
        FakeMessagesAPI(NARRATED_TURNS) as api,
        on_terminal(tmp_path, api, stdout_piped=True) as run,
    ):
        code, stdout = run.finish()
    assert code == 0
    assert stdout.decode() == ANSWER + "\n"
    assert NARRATION.encode() in run.screen


def whole_message_output(home: Path, *flags: str, env: Mapping[str, str] | None = None) -> str:
    with (
        FakeMessagesAPI(NARRATED_TURNS) as api,
        on_terminal(home, api, *flags, stdout_piped=True, extra_env=env) as run,
    ):
        code, stdout = run.finish()
    assert code == 0
    assert stdout.decode() == ANSWER + "\n"
    return run.screen.decode()


@pytest.mark.parametrize(
    ("flags", "env"), [(("--no-stream",), {}), ((), {"NO_STREAM": "yes"})], ids=["flag", "env"]
)
def test_no_stream_prints_each_message_whole_as_before(
    tmp_path: Path, flags: tuple[str, ...], env: dict[str, str]
) -> None:
    screen = whole_message_output(tmp_path, *flags, env=env)
    before_summary = screen.split("\r\n\r\nRun summary:")[0]
    # The narration as one line written whole, the call, and no streamed answer on stderr.
    assert before_summary == f"\r\n{NARRATION}\r\n-> show -- env"


def test_a_stream_cut_mid_answer_and_retried_leaves_the_answer_once_on_stdout(
    tmp_path: Path,
) -> None:
    turns: list[Turn] = [
        reply(text(ANSWER), chunk=CHUNK, cut_after=OPENING_EVENTS + 3),
        reply(text(ANSWER), chunk=CHUNK),
    ]
    with FakeMessagesAPI(turns) as api, on_terminal(tmp_path, api, stdout_piped=True) as run:
        code, stdout = run.finish()
    assert code == 0
    assert stdout.decode() == ANSWER + "\n"
    assert b"the text so far is void and starts over" in run.screen


def test_a_stream_cut_mid_answer_on_one_terminal_says_the_answer_starts_over(
    tmp_path: Path,
) -> None:
    turns: list[Turn] = [
        reply(text(ANSWER), chunk=CHUNK, cut_after=OPENING_EVENTS + 3),
        reply(text(ANSWER), chunk=CHUNK),
    ]
    with FakeMessagesAPI(turns) as api, on_terminal(tmp_path, api) as run:
        code, _ = run.finish()
    assert code == 0
    rows = run.rows()
    restart = next(row for row, line in enumerate(rows) if line.startswith("model busy:"))
    assert "the text so far is void" in rows[restart]
    assert "\n".join(rows[restart:]).count("untouched") == 1
