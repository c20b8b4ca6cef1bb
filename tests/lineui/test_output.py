"""The JSON output of `fisk run`: the exit code table, the outcome names, and every event kind
as a stream-json line that the shipped schema accepts."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.agent.events import (
    Event,
    PromptEvent,
    StatusEvent,
    StatusPhase,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from fisk_ai.agent.outcome import (
    Abandoned,
    BudgetSpent,
    Completed,
    Crashed,
    Declined,
    Deferred,
    Failed,
    IterationsSpent,
    NotRun,
    Refusal,
    RunResult,
    Suspended,
    TurnOutcome,
)
from fisk_ai.cli.flags import OUTPUT_FORMATS
from fisk_ai.lineui.output import (
    JsonRun,
    OutputFormat,
    Pending,
    exit_code,
    outcome_name,
    pending_of,
    schema,
    validator,
)
from fisk_ai.llm.types import Usage
from fisk_ai.sessions import Deferred as SessionDeferred
from fisk_ai.sessions import FileSessionStore
from fisk_ai.tools.base import ExecRecord
from tests.fakes.events import RecordingSink
from tests.sessions.builders import meta, result, turn

OUTCOMES: list[TurnOutcome] = [
    Completed("yes"),
    Declined("no"),
    IterationsSpent("ran out"),
    BudgetSpent("spent"),
    Suspended("stopped"),
    Deferred("waits", ("tu_1",)),
    Failed("broken"),
    Crashed("raised"),
    Abandoned("gone"),
    NotRun(Refusal.CONVERSATION_BUSY, "busy"),
]

EVENTS: list[Event] = [
    TextEvent("narration"),
    ThinkingEvent("hmm", signature="c2ln"),
    ToolCallEvent("tu_1", "status", {"node": "n1"}, command=("status", "--", "n1")),
    ToolResultEvent("tu_1", "ok", exec=ExecRecord("status -- n1", 2)),
    ToolResultEvent("tu_2", "too slow", is_error=True, timed_out=True),
    StatusEvent(iteration=1, phase=StatusPhase.CALLING_LLM, usage=Usage(10, 5, 3, 2)),
    StatusEvent(phase=StatusPhase.RETRYING, attempt=2, attempts=3, wait_seconds=1.5),
    WarningEvent("unknown_tool", name="nope"),
    PromptEvent("earlier question"),
    TextEvent("the answer", final=True),
]


def streamed(events: list[Event], result: RunResult | None) -> list[dict[str, Any]]:
    stdout = io.StringIO()
    run = JsonRun(RecordingSink(), stdout, stream=True)
    for event in events:
        run.emit(event)
    run.finish(result, session_id="s-1", model="claude-test-1")
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


def test_the_json_modes_give_each_way_a_turn_ends_a_code() -> None:
    codes = {type(outcome): exit_code(outcome) for outcome in OUTCOMES}

    assert codes[Completed] == 0
    assert len({codes[kind] for kind in (Declined, BudgetSpent, Suspended, Deferred, Failed)}) == 5
    assert 0 not in {codes[kind] for kind in (Declined, BudgetSpent, Suspended, Deferred, Failed)}


def test_the_result_schema_lists_every_exit_code_the_table_gives() -> None:
    listed = set(schema("run-result.schema.json")["properties"]["exit_code"]["enum"])

    assert {exit_code(outcome) for outcome in OUTCOMES} | {exit_code(None)} == listed


@pytest.mark.parametrize("outcome", OUTCOMES, ids=lambda outcome: type(outcome).__name__)
def test_every_outcome_makes_a_result_the_schema_accepts(outcome: TurnOutcome) -> None:
    [printed] = streamed([], RunResult(outcome, "s-1"))

    validator("run-result.schema.json").validate(printed)
    assert printed["outcome"]["kind"] == outcome_name(outcome)
    assert printed["exit_code"] == exit_code(outcome)


def test_outcome_names_are_the_variants_in_snake_case() -> None:
    assert outcome_name(IterationsSpent("x")) == "iterations_spent"
    assert outcome_name(NotRun(Refusal.CAPACITY, "x")) == "not_run"


def test_every_event_kind_streams_as_a_line_the_schema_accepts() -> None:
    lines = streamed(EVENTS, RunResult(Completed("the answer"), "s-1"))

    check = validator("run-event.schema.json")
    for line in lines:
        check.validate(line)
    assert [line.get("kind") for line in lines[:-1]] == [
        "text",
        "thinking",
        "tool_call",
        "tool_result",
        "tool_result",
        "status",
        "status",
        "warning",
        "prompt",
        "text",
    ]


def test_a_stream_line_carries_the_wire_block_of_its_event() -> None:
    [call, _] = streamed([EVENTS[2]], RunResult(Completed(), "s-1"))

    assert call["block"] == {
        "id": "tu_1",
        "name": "status",
        "input": {"node": "n1"},
        "argv": ["status", "--", "n1"],
    }


def test_a_call_reports_its_exit_status_and_a_timeout_its_status() -> None:
    [result] = streamed(EVENTS[2:5], RunResult(Completed(), "s-1"))[-1:]

    assert result["calls"] == [
        {
            "id": "tu_1",
            "name": "status",
            "argv": ["status", "--", "n1"],
            "input": {"node": "n1"},
            "status": "ok",
            "exit_code": 2,
        }
    ]


def test_the_surface_still_receives_every_event() -> None:
    lines = RecordingSink()
    run = JsonRun(lines, io.StringIO(), stream=False)
    for event in EVENTS:
        run.emit(event)

    assert lines.events == EVENTS


def test_json_without_stream_prints_only_the_result() -> None:
    stdout = io.StringIO()
    run = JsonRun(RecordingSink(), stdout, stream=False)
    for event in EVENTS:
        run.emit(event)
    run.finish(RunResult(Completed("the answer"), "s-1"), session_id="s-1", model="m")

    [only] = stdout.getvalue().splitlines()
    assert json.loads(only)["type"] == "result"


def test_a_run_given_up_at_a_second_interrupt_is_abandoned_and_resumable() -> None:
    [printed] = streamed([], None)

    validator("run-result.schema.json").validate(printed)
    assert printed["outcome"]["kind"] == "abandoned"
    assert printed["exit_code"] == 130


def test_the_flag_offers_exactly_the_output_formats() -> None:
    assert tuple(OutputFormat) == OUTPUT_FORMATS


async def test_pending_lists_deferred_calls_and_then_the_calls_still_to_run(
    tmp_path: Path,
) -> None:
    store = FileSessionStore(tmp_path)
    journal = await store.create("s-1", meta("s-1"))
    await journal.append(turn(1, "tu_1", "tu_2", "tu_3"))
    await journal.append(result("tu_1", "done"))
    await journal.append(SessionDeferred("tu_3", "approve", note="waiting for CAB"))
    await journal.close()

    assert await pending_of(store, "s-1") == (
        Pending("tu_3", "approve", deferred=True, note="waiting for CAB"),
        Pending("tu_2", "tool_tu_2", deferred=False),
    )
