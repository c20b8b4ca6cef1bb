"""The one mapping between how a turn ended and the a2a terminal message, both ways: every
ending a server sends reads back as the same ending, through the real codec."""

from __future__ import annotations

import pytest

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.messages import (
    Identity,
    RequestPrompt,
    TerminalError,
    TerminalResult,
    new_request,
    reply_header,
)
from fisk_ai.a2a.outcome import outcome_of, terminal_message, totals_of
from fisk_ai.a2a.vocabulary import Direction, ErrorCode, StopReason
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
from fisk_ai.llm.types import Usage

AGENT = Identity(name="ops")
REQUEST = new_request(
    RequestPrompt, sender=Identity(name="caller"), recipient=AGENT, prompt="how many streams"
)
USAGE = Usage(input_tokens=120, output_tokens=30)

KEPT: list[TurnOutcome] = [
    Completed("three streams"),
    Declined("I will not delete production data"),
    IterationsSpent("the turn used all 5 iterations allowed by llm.budget.max_iterations"),
    BudgetSpent("the conversation reached llm.budget.max_tokens"),
    Suspended("the operator stopped the run"),
    Deferred('the run is waiting on the deferred result of call t1 to "approve_change"'),
    Failed("the Anthropic API could not be reached"),
    Crashed('tool "stream_rm" failed with OSError: disk full'),
    *[NotRun(refusal, f"refused: {refusal.value}") for refusal in Refusal],
]


def over_the_wire(outcome: TurnOutcome) -> TerminalResult | TerminalError:
    result = RunResult(outcome, "s-1", usage=USAGE, llm_calls=2, tool_calls=1)
    header = reply_header(REQUEST, sender=AGENT, sequence=7)
    sent = encode(terminal_message(result, header, identity="ops"))
    received = decode(sent, direction=Direction.TO_CALLER)
    assert isinstance(received, TerminalResult | TerminalError)
    return received


@pytest.mark.parametrize("outcome", KEPT, ids=lambda outcome: type(outcome).__name__)
def test_every_ending_reads_back_as_the_same_ending(outcome: TurnOutcome) -> None:
    received = outcome_of(over_the_wire(outcome))
    if isinstance(outcome, Deferred):
        # The calls travel in the sentence; the wire has no field for their ids.
        assert received == Deferred(outcome.message)
    else:
        assert received == outcome


def test_a_refusal_by_the_model_stays_a_refusal_not_an_error() -> None:
    received = over_the_wire(Declined("I will not"))

    assert isinstance(received, TerminalResult)
    assert received.stop_reason == StopReason.REFUSAL
    assert isinstance(outcome_of(received), Declined)


def test_deferred_and_suspended_stay_apart_on_the_client() -> None:
    deferred = over_the_wire(Deferred("waiting on call t1"))
    suspended = over_the_wire(Suspended("stopped"))

    assert isinstance(deferred, TerminalError) and deferred.code == ErrorCode.DEFERRED
    assert isinstance(suspended, TerminalError) and suspended.code == ErrorCode.SUSPENDED
    assert isinstance(outcome_of(deferred), Deferred)
    assert isinstance(outcome_of(suspended), Suspended)


def test_an_abandoned_turn_reaches_the_caller_as_failed_with_the_agents_sentence() -> None:
    received = over_the_wire(Abandoned())

    assert isinstance(received, TerminalError) and received.code == ErrorCode.FAILED
    assert outcome_of(received) == Failed(
        "agent ops stopped before the run finished; send the turn again"
    )


def test_a_refusal_before_start_carries_its_code_and_no_usage() -> None:
    received = over_the_wire(NotRun(Refusal.CONVERSATION_BUSY, "busy"))

    assert isinstance(received, TerminalError)
    assert (received.code, received.usage) == (ErrorCode.CONVERSATION_BUSY, None)


@pytest.mark.parametrize("outcome", KEPT, ids=lambda outcome: type(outcome).__name__)
def test_every_error_carries_a_stop_reason_beside_its_code(outcome: TurnOutcome) -> None:
    received = over_the_wire(outcome)

    assert isinstance(received, TerminalResult) or received.stop_reason


def test_a_turn_that_ran_carries_the_conversation_totals() -> None:
    received = totals_of(over_the_wire(Completed("three streams")), "s-1")

    assert (received.usage, received.llm_calls, received.tool_calls) == (USAGE, 2, 1)
    assert received.answer == "three streams"


def test_an_unknown_stop_reason_from_a_peer_is_carried_as_an_answer() -> None:
    header = reply_header(REQUEST, sender=AGENT, sequence=2)
    peer = TerminalResult(**header, stop_reason="thought_hard", text="done")

    assert outcome_of(peer) == Completed("done")


def test_an_unknown_error_code_from_a_peer_is_a_failure() -> None:
    header = reply_header(REQUEST, sender=AGENT, sequence=2)
    peer = TerminalError(**header, error="the moon is down", code="lunar")

    assert outcome_of(peer) == Failed("the moon is down")
