"""What telemetry and the PII scan cost, each figure beside a bare baseline measured in the same
run.

- loop overhead per iteration with telemetry on: a Runner whose scripted model answers at once
  and whose in-process tool returns at once, with export on to an OTLP receiver on loopback
  (spans and metrics), against the same Runner with telemetry off; both journal to the file
  session store on tmpfs, so an fsync's noise does not hide a fraction of a millisecond. The
  bare awaits of the same model and tool are printed as the floor. The export itself runs on the
  SDK's own thread and is flushed after the timed run, as it is after a real one;
- the PII scan of a 64 KiB tool output (log lines and JSON with a few emails, phone numbers and
  a key among order numbers, UUIDs and timestamps) through ``fisk_ai.agent.pii``'s public
  scanner, beside one bare regex pass (``finditer`` of a single digit-run pattern) over the
  same text; and the slowest of the hostile 64 KiB outputs (tests/agent/pii_corpus.py), each of
  which once took seconds to minutes, beside the same bare pass.

Each loop figure is the median of the repetitions, on and off alternating in each; the scan's is
the p50 of its passes. Nothing is asserted; the budgets are printed beside the figures.

    python bench/telemetry.py [--iterations N] [--repetitions N] [--scans N]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from fisk_ai.agent.events import Event  # noqa: E402
from fisk_ai.agent.pii import scanner  # noqa: E402
from fisk_ai.agent.resources import Resources  # noqa: E402
from fisk_ai.agent.runner import Runner  # noqa: E402
from fisk_ai.llm.types import Request, user_text  # noqa: E402
from fisk_ai.sessions.file import FileSessionStore  # noqa: E402
from fisk_ai.telemetry import DISABLED, Telemetry, TelemetrySettings, start  # noqa: E402
from fisk_ai.tools.base import ExecDeps  # noqa: E402
from tests.agent.conftest import SETTINGS, FakeTool, toolset  # noqa: E402
from tests.agent.pii_corpus import HOSTILE_OUTPUTS  # noqa: E402
from tests.fakes.provider import ScriptedProvider, answer, call, calls  # noqa: E402
from tests.telemetry.receiver import Receiver  # noqa: E402

TELEMETRY_BUDGET_MS = 0.5
SCAN_BUDGET_MS = 10.0
TOOL_OUTPUT_BYTES = 64 * 1024
# A card- or phone-like digit run: one linear pass, the cheapest a single check could be.
BARE_PATTERN = re.compile(r"\d{9,19}")


class NoEvents:
    def emit(self, event: Event) -> None:
        return None


def scripted(iterations: int) -> ScriptedProvider:
    """A model that asks for the tool on every call but the last, then answers; never waits."""
    asks = [calls(call(f"t{number}", "status")) for number in range(1, iterations)]
    return ScriptedProvider([*asks, answer("done")])


async def runner_seconds(iterations: int, telemetry: Telemetry, directory: Path) -> float:
    settings = replace(SETTINGS, max_iterations=iterations + 1, max_tokens=10**12)
    resources = Resources(
        settings,
        scripted(iterations),
        toolset(FakeTool("status")),
        FileSessionStore(directory),
        telemetry=telemetry,
    )
    runner = Runner(resources, events=NoEvents())
    started = time.perf_counter()
    async with runner:
        result = await runner.start("go")
    elapsed = time.perf_counter() - started
    if result.llm_calls != iterations:
        raise RuntimeError(f"the runner made {result.llm_calls} calls, not {iterations}")
    return elapsed


async def bare_awaits_seconds(iterations: int) -> float:
    """The same model and tool awaited directly, with no loop around them."""
    model, tool = scripted(iterations), FakeTool("status")
    request = model_request()
    deps = ExecDeps()
    started = time.perf_counter()
    for _ in range(iterations):
        await model.call(request)
        await tool.execute("{}", deps)
    return time.perf_counter() - started


def model_request() -> Request:
    return Request(model="bench", system=("bench",), messages=(user_text("go"),))


def loop_ms(iterations: int, repetitions: int) -> tuple[float, float, float, str]:
    """Median per-iteration milliseconds with telemetry on, off, and of the bare awaits; and
    the delivery line of the last exporting run, to show the spans reached the receiver."""
    receiver = Receiver()
    receiver.start()
    on, off, bare = [], [], []
    delivered = ""
    # The file store on tmpfs where there is one: the journal's real code, without the disk's
    # fsync noise, which would swamp a fraction of a millisecond.
    parent = "/dev/shm" if Path("/dev/shm").is_dir() else None
    try:
        with tempfile.TemporaryDirectory(dir=parent) as scratch:
            runs = Path(scratch)
            # One warm-up of each, so the SDK's first import is not in a figure.
            for repetition in range(repetitions + 1):
                handle = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint))
                on_seconds = asyncio.run(
                    runner_seconds(iterations, handle, runs / f"on{repetition}")
                )
                delivered = handle.shutdown().summary()
                off_seconds = asyncio.run(
                    runner_seconds(iterations, DISABLED, runs / f"off{repetition}")
                )
                bare_seconds = asyncio.run(bare_awaits_seconds(iterations))
                if repetition:
                    on.append(on_seconds)
                    off.append(off_seconds)
                    bare.append(bare_seconds)
    finally:
        receiver.stop()

    def per_iteration(samples: list[float]) -> float:
        return statistics.median(samples) * 1000 / iterations

    return per_iteration(on), per_iteration(off), per_iteration(bare), delivered


def tool_output(size: int) -> str:
    """Deterministic log and JSON lines, a few of them holding personal data or a key."""
    chooser = random.Random(13)
    lines: list[str] = []
    total = 0
    number = 0
    while total < size:
        number += 1
        order = chooser.randrange(10**11, 10**12)
        uuid = f"{chooser.getrandbits(128):032x}"
        stamp = f"2026-11-{1 + number % 28:02d}T{number % 24:02d}:{number % 60:02d}:07Z"
        if number % 40 == 0:
            line = f'{stamp} INFO notify user="jane.doe{number}@example.com" order={order}'
        elif number % 55 == 0:
            line = f"{stamp} WARN callback +1 415 555 {number % 10000:04d} failed for {uuid}"
        elif number % 97 == 0:
            line = f'{stamp} DEBUG header authorization="Bearer sk-ant-{uuid}{uuid}"'
        else:
            line = (
                f'{{"time": "{stamp}", "level": "info", "order": {order}, '
                f'"request": "{uuid}", "version": "2.{number % 9}.{number % 31}", '
                f'"ms": {number % 997}}}'
            )
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def scan_ms(passes: int) -> tuple[float, float, int]:
    """The p50 milliseconds of the PII scan and of the bare regex pass over the same 64 KiB
    output, and how many findings the scan made."""
    text = tool_output(TOOL_OUTPUT_BYTES)
    scan = scanner()
    findings = len(scan.scan(text))
    scans, bares = [], []
    for _ in range(passes):
        started = time.perf_counter()
        scan.scan(text)
        scans.append(time.perf_counter() - started)
        started = time.perf_counter()
        for _match in BARE_PATTERN.finditer(text):
            pass
        bares.append(time.perf_counter() - started)
    return statistics.median(scans) * 1000, statistics.median(bares) * 1000, findings


def hostile_scan_ms(passes: int) -> tuple[str, float]:
    """The slowest of the hostile 64 KiB outputs (tests/agent/pii_corpus.py) and its p50 scan
    in milliseconds: each once re-read a long run from every character, for seconds."""
    scan = scanner()
    medians = {}
    for name, text in HOSTILE_OUTPUTS.items():
        samples = []
        for _ in range(max(1, passes // 5)):
            started = time.perf_counter()
            scan.scan(text)
            samples.append(time.perf_counter() - started)
        medians[name] = statistics.median(samples) * 1000
    slowest = max(medians, key=medians.__getitem__)
    return slowest, medians[slowest]


@dataclass(frozen=True)
class Row:
    """One line of the report: the figure, its bare baseline, and the verdict on the budget."""

    label: str
    figure: str
    baseline: str
    result: str
    budget: str
    within: bool | None


def print_table(rows: list[Row]) -> None:
    verdicts = {True: "ok", False: "OVER", None: "-"}
    table = [("measure", "median", "bare baseline", "result", "budget", "")]
    table += [
        (row.label, row.figure, row.baseline, row.result, row.budget, verdicts[row.within])
        for row in rows
    ]
    widths = [max(len(line[column]) for line in table) for column in range(len(table[0]))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))


def measure(iterations: int, repetitions: int, passes: int) -> list[Row]:
    on_ms, off_ms, bare_ms, delivered = loop_ms(iterations, repetitions)
    added = on_ms - off_ms
    scanned_ms, regex_ms, findings = scan_ms(passes)
    hostile, hostile_ms = hostile_scan_ms(passes)
    return [
        Row(
            "loop / iteration, telemetry off",
            f"{off_ms:.3f} ms",
            f"awaits {bare_ms:.4f} ms",
            f"{off_ms / bare_ms:.0f}x",
            "-",
            None,
        ),
        Row(
            f"loop / iteration, telemetry on ({delivered})",
            f"{on_ms:.3f} ms",
            f"off {off_ms:.3f} ms",
            f"+{added:.3f} ms ({on_ms / off_ms:.2f}x)",
            f"<= +{TELEMETRY_BUDGET_MS} ms",
            added <= TELEMETRY_BUDGET_MS,
        ),
        Row(
            f"PII scan of 64 KiB tool output ({findings} findings), p50",
            f"{scanned_ms:.2f} ms",
            f"one regex pass {regex_ms:.3f} ms",
            f"{scanned_ms / regex_ms:.1f}x",
            f"<= {SCAN_BUDGET_MS:.0f} ms",
            scanned_ms <= SCAN_BUDGET_MS,
        ),
        Row(
            f"PII scan of the slowest hostile 64 KiB output ({hostile}), p50",
            f"{hostile_ms:.2f} ms",
            f"one regex pass {regex_ms:.3f} ms",
            f"{hostile_ms / regex_ms:.1f}x",
            "- (seconds before)",
            None,
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--iterations", type=int, default=200, help="loop iterations per run")
    parser.add_argument("--repetitions", type=int, default=7, help="runs of each loop variant")
    parser.add_argument("--scans", type=int, default=50, help="passes of the 64 KiB scan")
    args = parser.parse_args()
    print_table(measure(args.iterations, args.repetitions, args.scans))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
