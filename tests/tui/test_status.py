from __future__ import annotations

from fisk_ai.agent.loop import StopReason
from fisk_ai.llm.types import Usage
from fisk_ai.tui.status import Counters, RunState, StatusLine, state_after_turn


def test_the_bar_shows_the_sum_of_the_four_token_counters() -> None:
    counters = Counters(Usage(100, 20, cache_read_tokens=300, cache_create_tokens=5))
    assert "tokens=425" in StatusLine(counters=counters).text()


def test_the_state_word_is_written_out() -> None:
    assert StatusLine(state=RunState.AWAITING_INPUT).text().startswith("[awaiting input]")


def test_a_stop_request_is_not_undone_by_a_question() -> None:
    line = StatusLine().moved(RunState.SUSPENDING).moved(RunState.BLOCKED)
    assert line.state is RunState.SUSPENDING


def test_a_question_blocks_the_run_and_an_answer_resumes_it() -> None:
    line = StatusLine().moved(RunState.BLOCKED)
    assert line.state is RunState.BLOCKED
    assert line.moved(RunState.RUNNING).state is RunState.RUNNING


def test_a_finished_turn_maps_its_stop_reason() -> None:
    assert state_after_turn(StopReason.COMPLETED) is RunState.COMPLETE
    assert state_after_turn(StopReason.SUSPENDED) is RunState.SUSPENDED
    assert state_after_turn(StopReason.ERROR) is RunState.ERROR
    assert state_after_turn(StopReason.MAX_ITERATIONS) is RunState.ABORTED


def test_elapsed_time_is_not_shown() -> None:
    text = StatusLine(model="m", session="s").text()
    assert "elapsed" not in text and "latency" not in text
