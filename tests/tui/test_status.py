from __future__ import annotations

import pytest

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
    Suspended,
    TurnOutcome,
)
from fisk_ai.llm.types import Usage
from fisk_ai.tui.status import Counters, RunState, StatusLine, can_move, state_after_turn


def test_the_bar_shows_uncached_input_over_output_then_cache_reads_then_thinking() -> None:
    counters = Counters(
        Usage(100, 2_000, cache_read_tokens=3_000, cache_create_tokens=5, thinking_tokens=700)
    )
    assert (
        "  tokens=100/2,000  cached=3,000  thinking=700  " in StatusLine(counters=counters).text()
    )


def test_the_bar_leaves_out_cache_reads_when_there_are_none() -> None:
    counters = Counters(Usage(100, 20, cache_create_tokens=5))
    assert "  tokens=100/20  thinking=0" in StatusLine(counters=counters).text()
    assert "cached=" not in StatusLine(counters=counters).text()


def test_at_80_columns_the_cache_reads_go_before_the_tokens() -> None:
    counters = Counters(Usage(123_456, 98_765, cache_read_tokens=4_567_890, thinking_tokens=7))
    line = StatusLine(
        RunState.RUNNING,
        counters,
        model="claude-sonnet-4-5-20250929",
        session="2a9Wsnapshotsession00000000",
        activity="stream info ORDERS",
        elapsed=3,
    )
    assert line.text(80) == "[running]  stream info ORDERS 3s  tokens=123,456/98,765   ? help"


def test_the_state_word_is_written_out() -> None:
    assert StatusLine(state=RunState.AWAITING_INPUT).text().startswith("[awaiting input]")


def test_a_stop_request_is_not_undone_by_a_question() -> None:
    assert can_move(RunState.RUNNING, RunState.SUSPENDING)
    assert not can_move(RunState.SUSPENDING, RunState.BLOCKED)


def test_a_question_blocks_the_run_and_an_answer_resumes_it() -> None:
    assert can_move(RunState.RUNNING, RunState.BLOCKED)
    assert can_move(RunState.BLOCKED, RunState.RUNNING)


@pytest.mark.parametrize(
    ("outcome", "state"),
    [
        (Completed("three streams"), RunState.COMPLETE),
        (Suspended("stopped"), RunState.SUSPENDED),
        (Deferred("waiting on call t1", ("t1",)), RunState.SUSPENDED),
        (Failed("the model call failed"), RunState.ERROR),
        (Crashed("a tool raised"), RunState.ERROR),
        (NotRun(Refusal.CONVERSATION_BUSY, "busy"), RunState.ERROR),
        (Declined("I will not"), RunState.ABORTED),
        (IterationsSpent("out of iterations"), RunState.ABORTED),
        (BudgetSpent("out of tokens"), RunState.ABORTED),
        (Abandoned(), RunState.ABORTED),
    ],
    ids=lambda value: type(value).__name__,
)
def test_every_ending_of_a_turn_has_its_state_on_the_bar(
    outcome: TurnOutcome, state: RunState
) -> None:
    assert state_after_turn(outcome) is state


def test_elapsed_time_is_not_shown() -> None:
    text = StatusLine(model="m", session="s").text()
    assert "elapsed" not in text and "latency" not in text
