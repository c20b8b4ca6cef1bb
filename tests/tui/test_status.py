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


def test_the_bar_shows_the_sum_of_the_four_token_counters() -> None:
    counters = Counters(Usage(100, 20, cache_read_tokens=300, cache_create_tokens=5))
    assert "tokens=425" in StatusLine(counters=counters).text()


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
