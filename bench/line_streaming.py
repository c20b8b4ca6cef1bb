"""Line mode's first character on the terminal, beside a bare reader of the same stream.

The fake Messages API streams an answer and holds it just before its first text event. Once the
reader is waiting, the stream is let go and the clock starts; it stops when the answer's first
characters arrive on the reader's terminal (a pty). Two readers, the same number of times each,
alternating in one run:

- ``fisk run --no-tui`` on the pty (stdout and stderr both on it): provider, agent loop, the
  serving side's coalescing, the embedded broker, the a2a client and the line surface;
- a bare reader: the anthropic SDK's own ``messages.stream`` iterator printing ``text_stream``
  to the pty, the floor any reader of that stream pays.

Printed: the median and p90 of each, their ratio and the milliseconds line mode adds, beside
the budget of 30 ms above the bare reader.

    python bench/line_streaming.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.fakes.fiskapp import application, command, write_fake_app  # noqa: E402
from tests.fakes.messages_api import FakeMessagesAPI, reply, text  # noqa: E402

FISK = Path(sys.executable).parent / "fisk"
ANSWER = "Streaming answers appear as they are written. " * 4
CHUNK = 4
MARK = ANSWER[:CHUNK].encode()
"""The first text event's characters."""
OPENING_EVENTS = 3
"""message_start, ping and content_block_start: the stream is held before its first text."""
BUDGET_MS = 30.0
WAIT = 60.0

BARE_READER = """
import os, sys
import anthropic
client = anthropic.Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key="sk-bench")
with client.messages.stream(
    model="bench", max_tokens=1024, messages=[{"role": "user", "content": "go"}]
) as stream:
    for piece in stream.text_stream:
        sys.stdout.write(piece)
        sys.stdout.flush()
"""


def first_characters(argv: list[str], environment: dict[str, str], cwd: Path) -> float:
    """Seconds from letting the stream go to the answer's first characters on the pty."""
    with FakeMessagesAPI([reply(text(ANSWER), chunk=CHUNK)]) as api:
        release = api.pause(1, after=OPENING_EVENTS)
        controller, terminal = pty.openpty()
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**environment, "ANTHROPIC_BASE_URL": api.base_url},
            stdin=subprocess.DEVNULL,
            stdout=terminal,
            stderr=terminal,
        )
        os.close(terminal)
        try:
            screen = bytearray()
            give_up = time.monotonic() + WAIT
            while api.events_sent(1) < OPENING_EVENTS:
                _drain(controller, screen, 0.005)
                if time.monotonic() > give_up or process.poll() is not None:
                    raise RuntimeError(f"the reader never reached the stream:\n{screen!r}")
            _drain(controller, screen, 0.05)
            screen.clear()
            began = time.perf_counter()
            release.set()
            while MARK not in screen:
                if not _drain(controller, screen, WAIT):
                    raise RuntimeError(f"the answer never reached the terminal:\n{screen!r}")
            elapsed = time.perf_counter() - began
            while _drain(controller, screen, WAIT):
                pass
            process.wait(timeout=WAIT)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            os.close(controller)
    return elapsed


def _drain(controller: int, screen: bytearray, timeout: float) -> bool:
    """Read what the pty has within ``timeout``; False once every writer closed it."""
    ready, _, _ = select.select([controller], [], [], timeout)
    if not ready:
        return True
    try:
        chunk = os.read(controller, 65536)
    except OSError:
        return False
    screen.extend(chunk)
    return bool(chunk)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        home = Path(directory)
        app = write_fake_app(home, application("bench", commands=[command("noop", "Nothing")]))
        config = home / "agent.yaml"
        config.write_text(
            f"application_path: {app}\nsystem_prompt: Answer.\nllm:\n  model: bench\n"
        )
        environment = {
            name: value
            for name, value in os.environ.items()
            if name not in ("NO_STREAM", "NO_COLOR", "NO_TUI")
        }
        environment |= {
            "ANTHROPIC_API_KEY": "sk-bench",
            "XDG_STATE_HOME": str(home / "state"),
            "TERM": "xterm-256color",
        }
        line_mode = [str(FISK), "run", "--no-tui", "--config", str(config), "go"]
        bare = [sys.executable, "-c", BARE_READER]
        line_times: list[float] = []
        bare_times: list[float] = []
        for _ in range(options.runs):
            bare_times.append(first_characters(bare, environment, home) * 1000)
            line_times.append(first_characters(line_mode, environment, home) * 1000)
    print(f"{options.runs} runs each, alternating; first text event to first character on a pty")
    print(f"{'reader':<44} {'median':>9} {'p90':>9}")
    for name, times in (
        ("bare: anthropic SDK text_stream", bare_times),
        ("fisk run --no-tui", line_times),
    ):
        ordered = sorted(times)
        p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
        print(f"{name:<44} {statistics.median(times):>7.2f}ms {p90:>7.2f}ms")
    bare_median, line_median = statistics.median(bare_times), statistics.median(line_times)
    print(
        f"line mode: {line_median / bare_median:.1f}x the bare reader, "
        f"{line_median - bare_median:+.2f} ms above it (budget {BUDGET_MS:.0f} ms above)"
    )


if __name__ == "__main__":
    main()
