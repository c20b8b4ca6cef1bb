"""The transcript viewport against Textual's own Log on a 100,000-line conversation.

Each widget is measured in its own process, so the memory figure is that widget's alone:

    python bench/transcript.py

Figures: time to load the conversation and settle the first frame, one search over all of it,
resident memory afterwards, and the median time from a key press to the frame it causes while
paging through. Budgets (issue 5): search 50 ms, memory 200 MB, keypress-to-frame 16 ms.
No asserts: this prints a table.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.pilot import Pilot

# Textual reads this at import; the scroll animation would otherwise dominate every key press.
os.environ["TEXTUAL_ANIMATIONS"] = "none"

LINE_TARGET = 100_000
NEEDLE = "needle"
SIZE = (120, 40)
PRESSES = 40
WORDS = ["stream", "consumer", "ack", "pending", "subject", "bytes", "replica", "leader"]


def conversation() -> list[Any]:
    """Turns of prompt, thinking, narration, a command and its output, until 100k lines."""
    from fisk_ai.agent.events import (
        PromptEvent,
        TextEvent,
        ThinkingEvent,
        ToolCallEvent,
        ToolResultEvent,
    )
    from fisk_ai.tools.base import ExecRecord

    chooser = random.Random(5)

    def line() -> str:
        words: list[str] = []
        target = chooser.randint(20, 200)
        while sum(len(word) + 1 for word in words) < target:
            words.append(NEEDLE if chooser.random() < 0.0001 else chooser.choice(WORDS))
        return " ".join(words)

    events: list[Any] = []
    lines = 0
    turn = 0
    while lines < LINE_TARGET:
        turn += 1
        output = "\n".join(line() for _ in range(chooser.randint(40, 160)))
        events += [
            PromptEvent(f"turn {turn}: {line()}"),
            ThinkingEvent("\n".join(line() for _ in range(3))),
            TextEvent("\n".join(line() for _ in range(2))),
            ToolCallEvent(f"c{turn}", "stream_ls", {}, ("stream", "ls", f"--page={turn}")),
            ToolResultEvent(f"c{turn}", output, exec=ExecRecord("stream ls", 0)),
        ]
        # prompt, thinking, narration, the call, the result header and its body
        lines += 1 + 3 + 2 + 1 + 1 + output.count("\n") + 1
    return events


def resident_megabytes() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1_000_000


async def measure(widget: str) -> dict[str, float]:
    from textual.app import App, ComposeResult
    from textual.widgets import Log

    from fisk_ai.tui.transcript import Transcript
    from fisk_ai.tui.widgets.transcript_view import TranscriptView

    events = conversation()
    lines = Transcript()
    lines.add_events(events)
    plain_lines = list(lines.lines)
    del lines

    class BenchApp(App[None]):
        def compose(self) -> ComposeResult:
            if widget == "viewer":
                # Output and thinking expanded, so both widgets have all 100k lines to page through.
                yield TranscriptView(
                    Transcript(output_folded=False, thinking_folded=False),
                    copy_directory=Path("/tmp"),
                )
            else:
                yield Log()

    app = BenchApp()
    figures: dict[str, float] = {}
    frames: list[float] = []
    real_display = app._display

    def timed_display(screen: Any, renderable: Any) -> None:
        from textual._compositor import CompositorUpdate

        # Headless apps skip turning the frame into terminal bytes; do it here so it counts.
        if isinstance(renderable, CompositorUpdate):
            renderable.render_segments(app.console)
        frames.append(time.perf_counter())
        real_display(screen, renderable)

    app._display = timed_display  # type: ignore[method-assign]

    async with app.run_test(size=SIZE) as pilot:
        started = time.perf_counter()
        if widget == "viewer":
            view = app.query_one(TranscriptView)
            view.append(events)
        else:
            log = app.query_one(Log)
            log.write_lines(plain_lines)
        figures["load"] = time.perf_counter() - started
        await pilot.pause()
        figures["settle"] = time.perf_counter() - started
        figures["lines"] = float(len(plain_lines))

        started = time.perf_counter()
        if widget == "viewer":
            hits = view.search(NEEDLE)
        else:
            needle = NEEDLE.casefold()
            hits = sum(1 for text in log.lines if needle in text.casefold())
        figures["search"] = time.perf_counter() - started
        figures["hits"] = float(hits)
        await pilot.pause()

        latencies = await page_latencies(pilot, frames)
        figures["frame"] = statistics.median(latencies) if latencies else float("nan")
        figures["frames"] = float(len(latencies))
        figures["rss"] = resident_megabytes()
    return figures


async def page_latencies(pilot: Pilot[None], frames: list[float]) -> list[float]:
    """Page down half the presses and back up the rest; for each press that drew a frame, the
    time from the press to that frame (``frames`` is appended to by the display hook)."""
    await pilot.press("home")
    latencies: list[float] = []
    for press in range(PRESSES):
        key = "pagedown" if press < PRESSES // 2 else "pageup"
        before = len(frames)
        pressed = time.perf_counter()
        await pilot.press(key)
        await pilot.pause()
        if len(frames) > before:
            latencies.append(frames[before] - pressed)
    return latencies


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--widget":
        print(json.dumps(asyncio.run(measure(sys.argv[2]))))
        return
    results = {}
    for widget in ("viewer", "log"):
        completed = subprocess.run(
            [sys.executable, __file__, "--widget", widget],
            capture_output=True,
            text=True,
            check=True,
        )
        results[widget] = json.loads(completed.stdout.strip().splitlines()[-1])
    viewer, log = results["viewer"], results["log"]
    rows = [
        ("lines", "", f"{viewer['lines']:.0f}", f"{log['lines']:.0f}"),
        (
            "load (append call)",
            "",
            f"{viewer['load'] * 1000:.0f} ms",
            f"{log['load'] * 1000:.0f} ms",
        ),
        (
            "load + first frame",
            "",
            f"{viewer['settle'] * 1000:.0f} ms",
            f"{log['settle'] * 1000:.0f} ms",
        ),
        (
            "search, case-insensitive",
            "50 ms",
            f"{viewer['search'] * 1000:.1f} ms ({viewer['hits']:.0f} lines)",
            f"{log['search'] * 1000:.1f} ms ({log['hits']:.0f} lines)",
        ),
        ("memory RSS", "200 MB", f"{viewer['rss']:.0f} MB", f"{log['rss']:.0f} MB"),
        (
            "keypress to frame, median",
            "16 ms",
            f"{viewer['frame'] * 1000:.1f} ms ({viewer['frames']:.0f} frames)",
            f"{log['frame'] * 1000:.1f} ms ({log['frames']:.0f} frames)",
        ),
    ]
    header = ("figure", "budget", "TranscriptView", "textual Log")
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(4)]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
