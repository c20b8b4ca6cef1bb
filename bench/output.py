"""What `fisk run --output json|stream-json` costs beside `--output text`, in the same run.

- a whole run: `fisk run --no-tui` on the cowsay example against the fake Messages API, from
  spawn to exit, the model calling the say command once and then answering; the three output
  modes take turns in each repetition, so a busy machine slows them alike;
- the surface alone, in process: a run's events passed to the line surface (text mode), and to
  the JSON sink in front of it (json keeps the calls, stream-json also writes a line per event),
  per event, with the run result written at the end.

Each figure is a median (repetitions below). Nothing is asserted.

    python bench/output.py [--repetitions N] [--events N]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from fisk_ai.agent.events import (  # noqa: E402
    Event,
    StatusEvent,
    StatusPhase,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from fisk_ai.agent.outcome import Completed, RunResult  # noqa: E402
from fisk_ai.lineui.output import JsonRun  # noqa: E402
from fisk_ai.lineui.surface import LineSurface  # noqa: E402
from fisk_ai.llm.types import Usage  # noqa: E402
from fisk_ai.tools.base import ExecRecord  # noqa: E402
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use  # noqa: E402

COWSAY_CONFIG = REPO_ROOT / "examples" / "cowsay" / "agent.yaml"
MODES = ("text", "json", "stream-json")


def run_turns() -> list[dict[str, object]]:
    return [
        reply(
            tool_use("tu_1", "say", {"message": "Why did the cow cross the road?"}),
            stop_reason="tool_use",
        ),
        reply(text("To get to the udder side.")),
    ]


def whole_run_seconds(api: FakeMessagesAPI, state: Path, mode: str) -> float:
    api.script(run_turns())
    fisk = Path(sys.executable).parent / "fisk"
    argv = [str(fisk), "run", "--no-tui", "--output", mode, "--state-dir", str(state / "runs")]
    argv += ["--config", str(COWSAY_CONFIG), "tell me a joke"]
    environment = {
        **os.environ,
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": "sk-bench",
        "XDG_STATE_HOME": str(state),
        # The cowsay example starts with `#!/usr/bin/env python3`.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    started = time.perf_counter()
    completed = subprocess.run(
        argv, env=environment, stdin=subprocess.DEVNULL, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(f"fisk run failed: {completed.stderr.decode(errors='replace')}")
    return elapsed


def whole_runs(repetitions: int) -> dict[str, list[float]]:
    """Seconds from spawn to exit for each mode, one sample a repetition."""
    samples: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as directory, FakeMessagesAPI() as api:
        state = Path(directory)
        for mode in MODES:
            whole_run_seconds(api, state, mode)  # warm the caches once
        for _ in range(repetitions):
            for mode in MODES:
                samples[mode].append(whole_run_seconds(api, state, mode))
    return samples


def run_events(count: int) -> list[Event]:
    """A run's worth of events: a call, its result, a status and narration, repeated."""
    events: list[Event] = []
    for number in range(count // 4):
        call_id = f"tu_{number}"
        events += [
            ToolCallEvent(call_id, "say", {"message": "moo"}, command=("say", "--", "moo")),
            ToolResultEvent(call_id, "moo\n" * 8, exec=ExecRecord("say -- moo", 0)),
            StatusEvent(iteration=number, phase=StatusPhase.CALLING_LLM, usage=Usage(10, 5)),
            TextEvent("narration between the calls"),
        ]
    return events


def surface_microseconds(mode: str, events: list[Event]) -> float:
    """Microseconds per event for the surface of ``mode``, the run result included."""
    stderr, stdout = io.StringIO(), io.StringIO()
    lines = LineSurface(stderr)
    started = time.perf_counter()
    if mode == "text":
        for event in events:
            lines.emit(event)
    else:
        sink = JsonRun(lines, stdout, stream=mode == "stream-json")
        for event in events:
            sink.emit(event)
        sink.finish(RunResult(Completed("done"), "s-1"), session_id="s-1", model="bench")
    return (time.perf_counter() - started) / len(events) * 1e6


def surfaces(repetitions: int, count: int) -> dict[str, float]:
    events = run_events(count)
    samples: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(repetitions):
        for mode in MODES:
            samples[mode].append(surface_microseconds(mode, events))
    return {mode: statistics.median(values) for mode, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=9)
    parser.add_argument("--events", type=int, default=2000)
    options = parser.parse_args()

    samples = whole_runs(options.repetitions)
    runs = {mode: statistics.median(values) for mode, values in samples.items()}
    per_event = surfaces(options.repetitions, options.events)
    print(f"fisk run --no-tui, spawn to exit, median of {options.repetitions} (quartiles):")
    for mode in MODES:
        extra = runs[mode] - runs["text"]
        low, _, high = statistics.quantiles(samples[mode], n=4)
        print(
            f"  --output {mode:<12} {runs[mode] * 1000:8.1f} ms  ({extra * 1000:+.1f} ms)"
            f"  [{low * 1000:.0f} to {high * 1000:.0f} ms]"
        )
    print(f"the surface per event ({options.events} events), median of {options.repetitions}:")
    for mode in MODES:
        extra = per_event[mode] - per_event["text"]
        print(f"  --output {mode:<12} {per_event[mode]:8.1f} us  ({extra:+.1f} us)")


if __name__ == "__main__":
    main()
