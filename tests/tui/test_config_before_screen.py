"""`fisk run` on a real terminal checks its configuration before it takes the screen: a mistake
is one sentence on the normal terminal and exit 1, `harness.no_tui` gives line output, and a
good configuration's identity and model are on the first frame. The check runs in a forked child
while the workstation's modules load (fisk_ai/workstation/host.py); these runs go through that
path."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

from fisk_ai.workstation.host import FIRST_FRAME_FILE
from tests.e2e.agent_runs import fisk_environment
from tests.e2e.conftest import FISK
from tests.patience import DEADLINE

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
COWSAY = REPO_ROOT / "examples" / "cowsay"
ALTERNATE_SCREEN = b"\x1b[?1049h"
CTRL_D = b"\x04"


def run_on_terminal(
    args: list[str], cwd: Path, *, leave_after_first_frame: bool = False
) -> tuple[str, bytes, int]:
    """Run `fisk ARGS` with all three streams on a fresh 120x40 pseudo-terminal; what it wrote
    there (decoded, and raw) and its exit code. With ``leave_after_first_frame``, Ctrl-D is
    typed once the workstation has drawn its first frame."""
    mark = cwd / "first-frame"
    environment = fisk_environment(
        cwd,
        extra={
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # nothing listens: no turn succeeds
            FIRST_FRAME_FILE: str(mark),
            "TERM": "xterm-256color",
        },
    )
    main_fd, terminal_fd = pty.openpty()
    fcntl.ioctl(terminal_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [str(FISK), *args],
        stdin=terminal_fd,
        stdout=terminal_fd,
        stderr=terminal_fd,
        cwd=cwd,
        env=environment,
        start_new_session=True,
    )
    os.close(terminal_fd)
    written = bytearray()
    deadline = time.monotonic() + DEADLINE
    left = not leave_after_first_frame
    try:
        while time.monotonic() < deadline:
            if not left and mark.exists() and mark.read_text().endswith("\n"):
                os.write(main_fd, CTRL_D)
                left = True
            readable, _, _ = select.select([main_fd], [], [], 0.05)
            if readable:
                try:
                    chunk = os.read(main_fd, 65536)
                except OSError:
                    chunk = b""  # the terminal closed: the program has ended
                if not chunk and process.poll() is not None:
                    break
                written += chunk
            elif process.poll() is not None:
                break
        code = process.wait(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        with contextlib.suppress(OSError):
            os.close(main_fd)
    return bytes(written).decode("utf-8", "replace"), bytes(written), code


def cowsay_config(directory: Path, extra: str = "") -> Path:
    """The cowsay example's agent.yaml copied into ``directory``, with ``extra`` appended."""
    shutil.copy(COWSAY / "cowsay.py", directory / "cowsay.py")
    config = directory / "agent.yaml"
    config.write_text((COWSAY / "agent.yaml").read_text() + extra)
    return config


def test_a_missing_configuration_is_one_sentence_before_any_screen(tmp_path: Path) -> None:
    text, raw, code = run_on_terminal(["run", "--config", "absent.yaml", "hello"], tmp_path)

    assert code == 1
    assert ALTERNATE_SCREEN not in raw
    assert "fisk: error: the agent configuration absent.yaml does not exist" in text
    assert "Traceback" not in text


def test_a_mistyped_key_is_one_sentence_before_any_screen(tmp_path: Path) -> None:
    config = cowsay_config(tmp_path, "harness:\n  no_tuii: true\n")

    text, raw, code = run_on_terminal(["run", "--config", str(config), "hello"], tmp_path)

    assert code == 1
    assert ALTERNATE_SCREEN not in raw
    assert 'unknown key "harness.no_tuii"' in text
    assert "Traceback" not in text


def test_harness_no_tui_answers_in_lines_without_taking_the_screen(tmp_path: Path) -> None:
    config = cowsay_config(tmp_path, "harness:\n  no_tui: true\n")
    cassette = str(COWSAY / "joke.cassette")

    text, raw, code = run_on_terminal(
        ["run", "--config", str(config), "--replay", cassette, "tell me a joke"], tmp_path
    )

    assert code == 0, text
    assert ALTERNATE_SCREEN not in raw
    assert "Why did the cow go to outer space?" in text


def test_a_good_configuration_puts_its_identity_and_model_on_the_first_frame(
    tmp_path: Path,
) -> None:
    config = cowsay_config(tmp_path)

    text, raw, code = run_on_terminal(
        ["run", "--config", str(config), "--state-dir", str(tmp_path / "runs"), "hello"],
        tmp_path,
        leave_after_first_frame=True,
    )

    assert ALTERNATE_SCREEN in raw
    drawn = raw.split(ALTERNATE_SCREEN, 1)[1].decode("utf-8", "replace")
    assert "cowsay" in drawn
    assert "claude-haiku-4-5" in drawn
    assert code == 130, text
