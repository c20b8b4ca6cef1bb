"""How fast the workstation opens, each figure beside a baseline measured in the same run.

    python bench/workstation.py [--runs N]

- **First frame of `fisk run`**: from spawning the process in a pseudo-terminal to its first
  frame on the terminal, against a bare Textual app that draws one label, spawned the same way,
  in alternating runs, and against the same label drawn after importing what the workstation
  imports before its first frame (the floor its code size sets). Each writes the wall-clock
  time of its first frame to the file named by ``FISK_FIRST_FRAME_FILE`` (the workstation
  honours it; see fisk_ai/workstation/host.py), so nothing is polled on a timer. Budget: at most
  2x the bare app.
- **5,000 stored sessions**: `fisk session ls` as a whole process, and the session browser from
  its start until the list holds every row, against a process that only lists the directory,
  one that reads every journal, and the browser on an empty store (its floor). The first
  listing builds the index (cold); the figures after it read the index (warm). Budget: at most
  300 ms.
- **Keypress to frame on a 100k-line transcript**: bench/transcript.py's own measurement of the
  TranscriptView and of Textual's Log, reused. Budget: at most 1.2x the Log.
- **Esc to "stopped"**: the workstation headless, its agent hosted behind the embedded broker,
  a model call in flight that would never answer; from pressing Esc to the status bar reading
  `[suspended]`, against a bare Textual app whose Esc sets a label, timed the same way. Budget:
  under 100 ms.

No asserts: this prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # the test harness hosts the agent for the stop figure
FISK = Path(sys.executable).with_name("fisk")
COWSAY_CONFIG = REPO_ROOT / "examples" / "cowsay" / "agent.yaml"
FIRST_FRAME_FILE = "FISK_FIRST_FRAME_FILE"
TERMINAL_SIZE = (40, 120)  # rows, columns
SESSIONS = 5000
DEADLINE = 30.0
CTRL_D, CTRL_Q = b"\x04", b"\x11"

FIRST_FRAME_BUDGET = 2.0
LISTING_BUDGET_SECONDS = 0.300
KEYPRESS_BUDGET = 1.2
STOP_BUDGET_SECONDS = 0.100
STOP_RUNS = 5

BARE_APP = """
import os, time
from textual.app import App
from textual.widgets import Label

class Bare(App):
    def compose(self):
        yield Label("fisk-ai")

    def on_ready(self):
        with open(os.environ["FISK_FIRST_FRAME_FILE"], "w") as mark:
            mark.write(f"{time.time():.6f}\\n")

Bare().run()
"""

# The floor of the first frame: the same label, drawn after importing every module the
# workstation imports before its own first frame.
LABEL_AFTER_WORKSTATION_IMPORTS = (
    "import fisk_ai.cli.run, fisk_ai.workstation.host, fisk_ai.workstation.app\n" + BARE_APP
)

LIST_ONLY = "import os, sys; [entry.stat() for entry in os.scandir(sys.argv[1])]"
READ_ALL = (
    "import os, sys\n"
    "for entry in os.scandir(sys.argv[1]):\n"
    "    with open(entry.path, 'rb') as journal: journal.read()\n"
)


def first_frame_seconds(argv: list[str], leave: bytes, environment: dict[str, str]) -> float:
    """Spawn ``argv`` on a fresh pseudo-terminal; the seconds until its first frame. ``leave``
    is the key that ends it afterwards."""
    with tempfile.TemporaryDirectory() as scratch:
        mark = Path(scratch) / "first-frame"
        main_fd, terminal_fd = pty.openpty()
        rows, columns = TERMINAL_SIZE
        fcntl.ioctl(terminal_fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        started = time.time()
        process = subprocess.Popen(
            argv,
            stdin=terminal_fd,
            stdout=terminal_fd,
            stderr=terminal_fd,
            cwd=scratch,
            env={**environment, FIRST_FRAME_FILE: str(mark), "TERM": "xterm-256color"},
            start_new_session=True,
        )
        os.close(terminal_fd)
        try:
            drawn = _wait_for_mark(main_fd, mark, process)
            os.write(main_fd, leave)
            _drain_until_exit(main_fd, process)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            os.close(main_fd)
    return drawn - started


def _wait_for_mark(main_fd: int, mark: Path, process: subprocess.Popen[bytes]) -> float:
    """Read what the program draws (so it never blocks on a full terminal) until it has
    written its first-frame time."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):
            text = mark.read_text()
            if text.endswith("\n"):
                return float(text)
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} ended before its first frame")
        readable, _, _ = select.select([main_fd], [], [], 0.01)
        if readable:
            with contextlib.suppress(OSError):
                os.read(main_fd, 65536)
    raise RuntimeError(f"{process.args!r} drew no frame within {DEADLINE:.0f} s")


def _drain_until_exit(main_fd: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + DEADLINE
    while process.poll() is None and time.monotonic() < deadline:
        readable, _, _ = select.select([main_fd], [], [], 0.05)
        if readable:
            try:
                os.read(main_fd, 65536)
            except OSError:
                break  # the program closed the terminal
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=DEADLINE)


def first_frames(runs: int) -> dict[str, float]:
    """Median first frame of `fisk run`, of the bare app and of the bare app after the
    workstation's imports, in alternating runs."""
    environment = {
        **os.environ,
        "ANTHROPIC_API_KEY": "bench",
        # Nothing listens there: the turn fails after the frame, which is all that is timed.
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    }
    environment.pop("NO_TUI", None)
    with tempfile.TemporaryDirectory() as state:
        programs = {
            "fisk": (
                [str(FISK), "run", "--config", str(COWSAY_CONFIG), "--state-dir", state, "hello"],
                CTRL_D,
            ),
            "bare": ([sys.executable, "-c", BARE_APP], CTRL_Q),
            "floor": ([sys.executable, "-c", LABEL_AFTER_WORKSTATION_IMPORTS], CTRL_Q),
        }
        for argv, leave in programs.values():  # warm the disk cache
            first_frame_seconds(argv, leave, environment)
        samples: dict[str, list[float]] = {name: [] for name in programs}
        for _ in range(runs):
            for name, (argv, leave) in programs.items():
                samples[name].append(first_frame_seconds(argv, leave, environment))
    return {name: statistics.median(times) for name, times in samples.items()}


def write_sessions(directory: Path, count: int) -> None:
    """``count`` journals as a chat leaves them (meta, an answer, a terminal record), written
    with the journal encoding but without a sync per record, to keep the setup short."""
    from fisk_ai.llm.types import Message, Role, TextBlock
    from fisk_ai.sessions import Assistant, Fingerprint, Meta, Record, Terminal, TerminalReason
    from fisk_ai.sessions.records import encode_record

    directory.mkdir(mode=0o700)
    fingerprint = Fingerprint(
        provider="anthropic",
        model="claude-sonnet",
        system_hash="a" * 64,
        tools_hash="b" * 64,
        thinking_mode="unset",
        max_tokens=0,
        max_iterations=50,
    )
    created = datetime(2026, 1, 1, tzinfo=UTC)
    for number in range(count):
        run_id = f"bench-{number:05d}"
        answer = Message(Role.ASSISTANT, (TextBlock(f"answer {number} " * 20),))
        records = [
            Record(1, Meta(run_id, created, fingerprint, f"how is stream {number} doing?")),
            Record(2, Assistant(1, answer, 1200, 300)),
            Record(3, Terminal(TerminalReason.COMPLETED)),
        ]
        path = directory / f"{run_id}.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as journal:
            journal.write(b"".join(encode_record(record) + b"\n" for record in records))


def process_seconds(argv: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def browser_seconds(directory: Path) -> tuple[float, int]:
    """From the browser's start until its list holds every row and is drawn: the moment it
    has the listing, then one pause of the pilot, which lets the screen handle what is pending
    and draws it (and waits for the process to go idle, so it errs on the long side)."""
    from fisk_ai.screens.sessions import SessionBrowser
    from fisk_ai.sessions import FileSessionStore
    from fisk_ai.workstation.sessions_app import SessionsApp

    app = SessionsApp(FileSessionStore(directory))
    listed = asyncio.Event()
    started = time.perf_counter()
    async with app.run_test(size=(TERMINAL_SIZE[1], TERMINAL_SIZE[0])) as pilot:
        browser = app.screen
        assert isinstance(browser, SessionBrowser)
        app.watch(browser, "loaded", lambda loaded: listed.set() if loaded else None)
        await listed.wait()
        await pilot.pause()
        elapsed = time.perf_counter() - started
        rows = len(browser.all_rows)
    return elapsed, rows


def listings(runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch) / "runs"
        write_sessions(directory, SESSIONS)
        ls = [str(FISK), "session", "--state-dir", str(directory), "ls"]
        browse = [sys.executable, __file__, "--browser", str(directory)]
        figures = {"ls cold": process_seconds(ls, 1)}
        figures["ls"] = process_seconds(ls, runs)
        figures["list only"] = process_seconds(
            [sys.executable, "-c", LIST_ONLY, str(directory)], runs
        )
        figures["read all"] = process_seconds(
            [sys.executable, "-c", READ_ALL, str(directory)], runs
        )
        (directory / ".index.json").unlink()
        figures["browser cold"] = _browser_run(browse)
        figures["browser"] = statistics.median(_browser_run(browse) for _ in range(runs))
        # The floor: the same browser on a store with nothing in it.
        empty = [sys.executable, __file__, "--browser", str(Path(scratch) / "none")]
        figures["browser empty"] = statistics.median(
            _browser_run(empty, expected=0) for _ in range(runs)
        )
    return figures


def _browser_run(argv: list[str], expected: int = SESSIONS) -> float:
    completed = subprocess.run(argv, capture_output=True, text=True, check=True)
    seconds, rows = json.loads(completed.stdout.strip().splitlines()[-1])
    if rows != expected:
        raise RuntimeError(f"the browser listed {rows} sessions of {expected}")
    return float(seconds)


def keypresses() -> tuple[dict[str, float], dict[str, float]]:
    """bench/transcript.py's figures for the TranscriptView and for Textual's Log."""
    results = []
    for widget in ("viewer", "log"):
        completed = subprocess.run(
            [sys.executable, str(REPO_ROOT / "bench" / "transcript.py"), "--widget", widget],
            capture_output=True,
            text=True,
            check=False,
        )
        if completed.returncode:
            raise RuntimeError(f"bench/transcript.py --widget {widget}:\n{completed.stderr}")
        results.append(json.loads(completed.stdout.strip().splitlines()[-1]))
    return results[0], results[1]


async def stop_seconds(runs: int) -> tuple[float, float]:
    """The median seconds from Esc to the status bar saying the turn stopped, and from Esc to a
    bare app's label changing."""
    # Imported here: the workstation and the test harness load only for this figure.
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.widget import Widget
    from textual.widgets import Label

    from fisk_ai.llm.types import Request, Response
    from tests.fakes.provider import ScriptedProvider
    from tests.tui.workstation import SIZE, build_app

    class NeverAnswers(ScriptedProvider):
        def __init__(self) -> None:
            super().__init__()
            self.asked = asyncio.Event()

        async def call(self, request: Request) -> Response:
            self.asked.set()
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    class BareStop(App[None]):
        BINDINGS = [Binding("escape", "stop", "Stop")]  # noqa: RUF012

        def compose(self) -> ComposeResult:
            yield Label("running", id="state")

        def action_stop(self) -> None:
            self.query_one(Label).update("stopped")

    async def pressed_until(app: App[None], shown: Widget, words: str) -> float:
        """Press Esc as a terminal would; the seconds until ``shown`` draws ``words``, looked at
        each millisecond (the Pilot's own press waits for the app to go idle first)."""
        started = time.perf_counter()
        app.simulate_key("escape")
        while words not in str(shown.render()):
            if time.perf_counter() - started > DEADLINE:
                raise RuntimeError("the stop was not seen within the deadline")
            await asyncio.sleep(0.001)
        return time.perf_counter() - started

    workstation, bare = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as scratch:
            provider = NeverAnswers()
            app, agent = build_app(Path(scratch), provider)
            try:
                async with app.run_test(size=SIZE) as pilot:
                    await provider.asked.wait()
                    await pilot.pause()
                    bar = app.run_screen.status_bar
                    workstation.append(await pressed_until(app, bar, "[suspended]"))
            finally:
                await agent.close()
        bare_app = BareStop()
        async with bare_app.run_test(size=SIZE):
            label = bare_app.query_one(Label)
            bare.append(await pressed_until(bare_app, label, "stopped"))
    return statistics.median(workstation), statistics.median(bare)


def verdict(within: bool) -> str:
    return "ok" if within else "OVER"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--browser", metavar="DIR", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.browser:
        os.environ["TEXTUAL_ANIMATIONS"] = "none"
        print(json.dumps(asyncio.run(browser_seconds(Path(arguments.browser)))))
        return

    frames = first_frames(arguments.runs)
    fisk_frame, bare_frame = frames["fisk"], frames["bare"]
    listed = listings(arguments.runs)
    viewer, log = keypresses()
    stopped, bare_stop = asyncio.run(stop_seconds(STOP_RUNS))
    frame_ratio = fisk_frame / bare_frame
    key_ratio = viewer["frame"] / log["frame"]
    rows = [
        (
            "first frame of fisk run",
            f"{fisk_frame * 1000:.0f} ms ({frame_ratio:.2f}x)",
            f"bare Textual label {bare_frame * 1000:.0f} ms; after the workstation's "
            f"imports {frames['floor'] * 1000:.0f} ms ({frames['floor'] / bare_frame:.2f}x)",
            f"<= {FIRST_FRAME_BUDGET:.0f}x",
            verdict(frame_ratio <= FIRST_FRAME_BUDGET),
        ),
        (
            f"fisk session ls, {SESSIONS:,} sessions",
            f"{listed['ls'] * 1000:.0f} ms (cold {listed['ls cold'] * 1000:.0f} ms)",
            f"list dir {listed['list only'] * 1000:.0f} ms, "
            f"read all {listed['read all'] * 1000:.0f} ms",
            f"<= {LISTING_BUDGET_SECONDS * 1000:.0f} ms",
            verdict(listed["ls"] <= LISTING_BUDGET_SECONDS),
        ),
        (
            f"browser lists {SESSIONS:,} sessions",
            f"{listed['browser'] * 1000:.0f} ms (cold {listed['browser cold'] * 1000:.0f} ms)",
            f"browser on an empty store {listed['browser empty'] * 1000:.0f} ms",
            f"<= {LISTING_BUDGET_SECONDS * 1000:.0f} ms",
            verdict(listed["browser"] <= LISTING_BUDGET_SECONDS),
        ),
        (
            "keypress to frame, 100k lines",
            f"{viewer['frame'] * 1000:.1f} ms ({key_ratio:.2f}x)",
            f"textual Log {log['frame'] * 1000:.1f} ms",
            f"<= {KEYPRESS_BUDGET}x",
            verdict(key_ratio <= KEYPRESS_BUDGET),
        ),
        (
            "Esc to [suspended], model call in flight",
            f"{stopped * 1000:.1f} ms ({stopped / bare_stop:.2f}x)",
            f"bare app's Esc to its label {bare_stop * 1000:.1f} ms",
            f"< {STOP_BUDGET_SECONDS * 1000:.0f} ms",
            verdict(stopped < STOP_BUDGET_SECONDS),
        ),
    ]
    header = ("figure", "measured", "baseline (same run)", "budget", "")
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(5)]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
