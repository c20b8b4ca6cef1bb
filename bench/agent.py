"""What the agent costs beside the model and the tools, each figure beside a bare baseline.

- loop overhead per iteration: a Runner whose model answers at once and whose in-process tool
  returns at once, minus the same number of bare awaits of that model and tool, per iteration;
  measured with the file session store (what a run pays, two fsynced records an iteration) and
  with an in-memory store (the Python share alone);
- journal append: the file store's append against a bare ``os.write`` + ``os.fsync`` of the
  same bytes; and, as the floor of any journal, the bare write + fsync with each record encoded
  between two syncs (on a virtual disk, any work between syncs makes the next sync slower);
- fold: a 10,000-record journal folded into a conversation, beside decoding the same records'
  JSON;
- startup: `fisk run --no-tui` on the cowsay example, from spawn to the fake Messages API
  receiving the first request (and to exit), beside `python -c pass`; with bytecode caching
  allowed, and again as inherited when PYTHONDONTWRITEBYTECODE is set. Importing the anthropic
  SDK in a bare interpreter is shown too, as the floor under any run that calls the model.

Each figure is the median of five repetitions, with the baseline measured in each repetition
too. Nothing is asserted; the budgets are printed beside the figures.

    python bench/agent.py [--iterations N] [--appends N] [--directory DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from fisk_ai.agent.events import Event  # noqa: E402
from fisk_ai.agent.resources import Resources  # noqa: E402
from fisk_ai.agent.runner import Runner  # noqa: E402
from fisk_ai.agent.settings import AgentSettings  # noqa: E402
from fisk_ai.llm.types import (  # noqa: E402
    Capabilities,
    Message,
    Request,
    Response,
    Role,
    TextBlock,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    user_text,
)
from fisk_ai.sessions import (  # noqa: E402
    AppendAction,
    Assistant,
    FileSessionStore,
    Fingerprint,
    Meta,
    Payload,
    Record,
    SessionNotFound,
    SessionSummary,
    ToolResult,
    check_append,
    encode_record,
    fold,
)
from fisk_ai.sessions.store import check_claim  # noqa: E402
from fisk_ai.tools.base import ExecDeps, Kind, Outcome, Presentation  # noqa: E402
from fisk_ai.tools.toolset import ToolSet, ToolSource  # noqa: E402
from tests.fakes.messages_api import FakeMessagesAPI, reply, text  # noqa: E402

REPETITIONS = 5
FOLD_RECORDS = 10_000
COWSAY_CONFIG = REPO_ROOT / "examples" / "cowsay" / "agent.yaml"
LOOP_BUDGET_MS = 5.0
APPEND_BUDGET_RATIO = 1.3
FOLD_BUDGET_MS = 300.0
FIRST_REQUEST_BUDGET_S = 1.5
TOOL_OUTPUT = "x" * 400


def median_of(samples: list[float]) -> float:
    return statistics.median(samples)


# The loop.


class InstantModel:
    """Asks for the tool on every call but the last, then answers; never waits."""

    def __init__(self, iterations: int) -> None:
        usage = Usage(input_tokens=10, output_tokens=5)
        self._calls = [
            Response(
                Message(Role.ASSISTANT, (ToolUseBlock(f"tu_{number}", "instant", "{}"),)),
                "tool_use",
                usage,
            )
            for number in range(1, iterations)
        ]
        self._answer = Response(Message(Role.ASSISTANT, (TextBlock("done"),)), "end_turn", usage)
        self._served = 0
        self._capabilities = Capabilities(provider="bench", semconv_provider="bench")

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    async def call(self, request: Request) -> Response:
        served = self._served
        self._served += 1
        return self._calls[served] if served < len(self._calls) else self._answer

    async def aclose(self) -> None:
        return None


class InstantTool:
    name = "instant"
    description = "returns at once"
    model_description = description
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}}
    kind = Kind.CUSTOM
    presentation = Presentation.TRACED
    mcp_exposable = False
    a2a_exposable = False

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.description, self.input_schema, defer_loading)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        return Outcome(TOOL_OUTPUT)


class NoEvents:
    def emit(self, event: Event) -> None:
        return None


@dataclass
class MemoryJournal:
    run_id: str
    records: list[Record]

    @property
    def last_seq(self) -> int:
        return self.records[-1].seq

    async def append(self, payload: Payload, *, optional: bool = False) -> Record:
        record = Record(self.last_seq + 1, payload, optional)
        self.records.append(record)
        return record

    async def append_record(self, record: Record) -> AppendAction:
        action = check_append(self.last_seq, record.seq)
        if action is AppendAction.WRITE:
            self.records.append(record)
        return action

    async def close(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        return None


@dataclass
class MemoryStore:
    journals: dict[str, list[Record]] = field(default_factory=dict)

    async def create(self, run_id: str, meta: Meta) -> MemoryJournal:
        self.journals[run_id] = [Record(1, meta)]
        return MemoryJournal(run_id, self.journals[run_id])

    async def open(self, run_id: str, *, read_seq: int | None = None) -> MemoryJournal:
        check_claim(run_id, read_seq, self.journals[run_id][-1].seq)
        return MemoryJournal(run_id, self.journals[run_id])

    async def read(self, run_id: str) -> list[Record]:
        if run_id not in self.journals:
            raise SessionNotFound(f"no session {run_id}")
        return list(self.journals[run_id])

    async def exists(self, run_id: str) -> bool:
        return run_id in self.journals

    async def list(self) -> list[SessionSummary]:
        return []

    async def remove(self, run_id: str) -> None:
        self.journals.pop(run_id, None)

    def describe(self) -> str:
        return "memory"


async def runner_seconds(iterations: int, store: FileSessionStore | MemoryStore) -> float:
    settings = AgentSettings(
        model="bench", max_iterations=iterations + 1, max_tokens=10**12, system_prompt="bench"
    )
    tools = ToolSet([ToolSource("bench", (InstantTool(),))])
    runner = Runner(Resources(settings, InstantModel(iterations), tools, store), events=NoEvents())
    started = time.perf_counter()
    async with runner:
        result = await runner.start("go")
    elapsed = time.perf_counter() - started
    if result.llm_calls != iterations:
        raise RuntimeError(f"the runner made {result.llm_calls} calls, not {iterations}")
    return elapsed


async def bare_awaits_seconds(iterations: int) -> float:
    model, tool = InstantModel(iterations), InstantTool()
    request = Request(model="bench", system=("bench",), messages=(user_text("go"),))
    deps = ExecDeps()
    started = time.perf_counter()
    for _ in range(iterations):
        await model.call(request)
        await tool.execute("{}", deps)
    return time.perf_counter() - started


def loop_overhead_ms(
    iterations: int, store_for: Callable[[int], FileSessionStore | MemoryStore]
) -> tuple[float, float]:
    """Median per-iteration milliseconds of the runner and of the bare awaits."""
    runs, bares = [], []
    for repetition in range(REPETITIONS):
        runs.append(asyncio.run(runner_seconds(iterations, store_for(repetition))))
        bares.append(asyncio.run(bare_awaits_seconds(iterations)))
    return median_of(runs) * 1000 / iterations, median_of(bares) * 1000 / iterations


# The journal.


def journal_payloads(count: int) -> list[Payload]:
    """Alternating model turns with one call and their results, like a run's journal."""
    payloads: list[Payload] = []
    for number in range(1, count // 2 + 2):
        call = ToolUseBlock(f"tu_{number}", "instant", '{"node":"n1"}')
        turn = Message(Role.ASSISTANT, (TextBlock(f"step {number}"), call))
        payloads.append(Assistant(number, turn, 1200, 80, stop_reason="tool_use"))
        payloads.append(ToolResult(ToolResultBlock(call.id, TOOL_OUTPUT)))
    return payloads[:count]


def bench_meta(run_id: str) -> Meta:
    fingerprint = Fingerprint(
        provider="bench",
        model="bench",
        system_hash="a" * 64,
        tools_hash="b" * 64,
        thinking_mode="unset",
        max_tokens=500_000,
        max_iterations=50,
    )
    return Meta(run_id, datetime.now(UTC), fingerprint, "go")


async def store_append_seconds(directory: Path, run_id: str, payloads: list[Payload]) -> float:
    journal = await FileSessionStore(directory).create(run_id, bench_meta(run_id))
    try:
        started = time.perf_counter()
        for payload in payloads:
            await journal.append(payload)
        return time.perf_counter() - started
    finally:
        await journal.close()


def bare_append_seconds(path: Path, lines: Iterable[bytes]) -> float:
    """A bare write + fsync of each line; a generator makes whatever it does between two syncs
    part of the time."""
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        started = time.perf_counter()
        for line in lines:
            os.write(descriptor, line)
            os.fsync(descriptor)
        return time.perf_counter() - started
    finally:
        os.close(descriptor)


def append_cost_ms(directory: Path, appends: int) -> tuple[float, float, float]:
    """Median per-record milliseconds of the file store's append, of a bare write + fsync of the
    same bytes, and of the bare write + fsync with each record encoded in between."""
    payloads = journal_payloads(appends)
    lines = [
        encode_record(Record(seq, payload)) + b"\n" for seq, payload in enumerate(payloads, start=2)
    ]
    stores, bares, encodings = [], [], []
    for repetition in range(REPETITIONS):
        stores.append(
            asyncio.run(store_append_seconds(directory / "store", f"append-{repetition}", payloads))
        )
        bares.append(bare_append_seconds(directory / f"bare-{repetition}.json", lines))
        encoded_between_syncs = (
            encode_record(Record(seq, payload)) + b"\n"
            for seq, payload in enumerate(payloads, start=2)
        )
        encodings.append(
            bare_append_seconds(directory / f"enc-{repetition}.json", encoded_between_syncs)
        )

    def per_record(samples: list[float]) -> float:
        return median_of(samples) * 1000 / appends

    return per_record(stores), per_record(bares), per_record(encodings)


# The fold.


def fold_ms() -> tuple[float, float]:
    """Median milliseconds to fold a 10,000-record journal, and to decode its lines' JSON."""
    records = [Record(1, bench_meta("fold"))]
    records += [
        Record(seq, payload)
        for seq, payload in enumerate(journal_payloads(FOLD_RECORDS - 1), start=2)
    ]
    lines = [encode_record(record) for record in records]
    folds, decodes = [], []
    for _ in range(REPETITIONS):
        started = time.perf_counter()
        conversation = fold(records)
        folds.append(time.perf_counter() - started)
        started = time.perf_counter()
        for line in lines:
            json.loads(line)
        decodes.append(time.perf_counter() - started)
        if conversation.llm_calls != FOLD_RECORDS // 2:
            raise RuntimeError(f"the fold counted {conversation.llm_calls} model calls")
    return median_of(folds) * 1000, median_of(decodes) * 1000


# Startup to the first model request.


class TimedMessagesAPI(FakeMessagesAPI):
    """The fake Messages API, noting when each request arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    def _answer(
        self, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, Any], int]:
        self.arrivals.append(time.perf_counter())
        return super()._answer(path, headers, body)


def fisk_environment(api: FakeMessagesAPI, state: Path, *, bytecode: bool) -> dict[str, str]:
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("NO_COLOR", "VERBOSE", "TOOL_OUTPUT", "THINKING", "HTTP_DEBUG")
    }
    environment.update(
        {
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_API_KEY": "sk-bench",
            "XDG_STATE_HOME": str(state),
            # The cowsay example starts with `#!/usr/bin/env python3`.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
    )
    if bytecode:
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def first_request_seconds(
    api: TimedMessagesAPI, state: Path, *, bytecode: bool
) -> tuple[float, float]:
    """Seconds from spawning `fisk run` to the fake's first request, and to its exit."""
    api.script([reply(text("Moo."))])
    seen = len(api.arrivals)
    fisk = Path(sys.executable).parent / "fisk"
    argv = [str(fisk), "run", "--no-tui", "--state-dir", str(state / "runs")]
    argv += ["--config", str(COWSAY_CONFIG), "tell me a joke"]
    started = time.perf_counter()
    completed = subprocess.run(
        argv,
        env=fisk_environment(api, state, bytecode=bytecode),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    ended = time.perf_counter()
    if completed.returncode != 0 or len(api.arrivals) != seen + 1:
        raise RuntimeError(f"fisk run failed: {completed.stderr.decode(errors='replace')}")
    return api.arrivals[seen] - started, ended - started


def python_pass_seconds() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def sdk_import_seconds() -> tuple[float, float]:
    """Medians: a bare interpreter importing the anthropic SDK and exiting, and `python -c pass`;
    the floor under any run that calls the model."""
    subprocess.run([sys.executable, "-c", "import anthropic"], check=True)
    imports, bares = [], []
    for _ in range(REPETITIONS):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import anthropic"], check=True)
        imports.append(time.perf_counter() - started)
        bares.append(python_pass_seconds())
    return median_of(imports), median_of(bares)


def startup_seconds(state: Path, *, bytecode: bool) -> tuple[float, float, float]:
    """Medians: spawn to first request, spawn to exit, and `python -c pass`."""
    api = TimedMessagesAPI()
    api.start()
    try:
        first_request_seconds(api, state, bytecode=bytecode)  # warm the caches once
        python_pass_seconds()
        firsts, totals, bares = [], [], []
        for _ in range(REPETITIONS):
            first, total = first_request_seconds(api, state, bytecode=bytecode)
            firsts.append(first)
            totals.append(total)
            bares.append(python_pass_seconds())
    finally:
        api.stop()
    return median_of(firsts), median_of(totals), median_of(bares)


# The report.


@dataclass(frozen=True)
class Row:
    label: str
    figure: str
    baseline: str
    result: str
    budget: str
    within: bool | None

    def cells(self) -> list[str]:
        verdict = {True: "ok", False: "OVER", None: "-"}[self.within]
        return [self.label, self.figure, self.baseline, self.result, self.budget, verdict]


def print_table(rows: list[Row]) -> None:
    header = ["measure", "median", "bare baseline", "result", "budget", ""]
    table = [header, *(row.cells() for row in rows)]
    widths = [max(len(line[column]) for line in table) for column in range(len(header))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))


def measure(iterations: int, appends: int, directory: Path) -> list[Row]:
    rows = []
    stores: list[tuple[str, Callable[[int], FileSessionStore | MemoryStore]]] = [
        (
            "loop overhead / iteration (file store)",
            lambda repetition: FileSessionStore(directory / f"loop-{repetition}"),
        ),
        ("loop overhead / iteration (memory store)", lambda _: MemoryStore()),
    ]
    for label, store_for in stores:
        run_ms, bare_ms = loop_overhead_ms(iterations, store_for)
        overhead = run_ms - bare_ms
        rows.append(
            Row(
                label,
                f"{run_ms:.3f} ms",
                f"awaits {bare_ms:.4f} ms",
                f"{overhead:.3f} ms",
                f"<= {LOOP_BUDGET_MS:.0f} ms",
                overhead <= LOOP_BUDGET_MS,
            )
        )

    store_ms, bare_ms, encoding_ms = append_cost_ms(directory / "appends", appends)
    ratio = store_ms / bare_ms
    rows.append(
        Row(
            "journal append / record (file store)",
            f"{store_ms:.3f} ms",
            f"write+fsync {bare_ms:.3f} ms",
            f"{ratio:.2f}x",
            f"<= {APPEND_BUDGET_RATIO}x",
            ratio <= APPEND_BUDGET_RATIO,
        )
    )
    rows.append(
        Row(
            "  the same, encoding each record between syncs",
            f"{encoding_ms:.3f} ms",
            f"write+fsync {bare_ms:.3f} ms",
            f"{encoding_ms / bare_ms:.2f}x",
            "-",
            None,
        )
    )

    folded_ms, decoded_ms = fold_ms()
    rows.append(
        Row(
            f"fold of {FOLD_RECORDS:,} records",
            f"{folded_ms:.1f} ms",
            f"json.loads {decoded_ms:.1f} ms",
            f"{folded_ms:.1f} ms",
            f"<= {FOLD_BUDGET_MS:.0f} ms",
            folded_ms <= FOLD_BUDGET_MS,
        )
    )

    sdk, bare = sdk_import_seconds()
    rows.append(
        Row(
            "python -c 'import anthropic', to exit",
            f"{sdk:.3f} s",
            f"python -c pass {bare:.3f} s",
            f"{sdk / bare:.1f}x",
            "-",
            None,
        )
    )

    variants = [("bytecode cached", True)]
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        variants.append(("PYTHONDONTWRITEBYTECODE set", False))
    for name, bytecode in variants:
        first, total, bare = startup_seconds(directory / f"startup-{bytecode}", bytecode=bytecode)
        rows.append(
            Row(
                f"fisk run to first request ({name})",
                f"{first:.3f} s",
                f"python -c pass {bare:.3f} s",
                f"{first:.3f} s",
                f"<= {FIRST_REQUEST_BUDGET_S} s",
                first <= FIRST_REQUEST_BUDGET_S,
            )
        )
        rows.append(
            Row(
                f"fisk run to exit ({name})",
                f"{total:.3f} s",
                f"python -c pass {bare:.3f} s",
                f"{total / bare:.1f}x",
                "-",
                None,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--iterations", type=int, default=100, help="model calls per loop run")
    parser.add_argument("--appends", type=int, default=200, help="records per append run")
    parser.add_argument(
        "--directory", type=Path, help="where journals are written (default: a temporary one)"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=options.directory, prefix="fisk-bench-") as scratch:
        rows = measure(options.iterations, options.appends, Path(scratch))
    print(f"median of {REPETITIONS}; each baseline measured in the same repetitions")
    print_table(rows)


if __name__ == "__main__":
    main()
