"""What fisk's events, endings and questions become in ACP's words, without a process."""

from __future__ import annotations

import pytest
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    DeniedOutcome,
    RequestPermissionResponse,
    TextContentBlock,
)

from fisk_ai.acp.questions import answer_of, options_for
from fisk_ai.acp.updates import UpdateWriter, tool_title, turn_end
from fisk_ai.agent.events import TextDeltaEvent, TextEvent
from fisk_ai.agent.outcome import (
    BudgetSpent,
    Completed,
    Declined,
    Deferred,
    Failed,
    IterationsSpent,
    Suspended,
    TurnOutcome,
)
from fisk_ai.tools.questions import (
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    SelectQuestion,
)
from fisk_ai.tools.toolset import ToolSet

APPROVAL = ApprovalQuestion("tu_1", "purge", "purge", "purge", "impact:rw", ("purge",))


def chosen(option_id: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option_id)
    )


CANCELLED = RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


@pytest.mark.parametrize(
    ("outcome", "stop_reason"),
    [
        (Completed("done"), "end_turn"),
        (Declined(), "refusal"),
        (IterationsSpent("out of iterations"), "max_turn_requests"),
        (BudgetSpent("out of tokens"), "max_tokens"),
        (Deferred("waits on a call"), "end_turn"),
    ],
)
def test_each_ending_has_its_stop_reason(outcome: TurnOutcome, stop_reason: str) -> None:
    assert turn_end(outcome, cancelled=False).stop_reason == stop_reason


def test_a_suspended_turn_the_client_cancelled_ends_cancelled() -> None:
    assert turn_end(Suspended("stopped"), cancelled=True).stop_reason == "cancelled"


def test_a_suspended_turn_nobody_cancelled_tells_why() -> None:
    assert turn_end(Suspended("nobody answered"), cancelled=False).notice == "nobody answered"


def test_a_failed_turn_is_an_error_with_its_sentence() -> None:
    assert turn_end(Failed("the model is unreachable"), cancelled=False).error == (
        "the model is unreachable"
    )


@pytest.mark.parametrize(
    ("option_id", "answer"),
    [
        ("allow-once", ApprovalChoice.ONCE),
        ("allow-always", ApprovalChoice.ALWAYS),
        ("reject-once", ApprovalChoice.NO),
        ("reject-always", ApprovalChoice.NO),
        ("not-offered", ApprovalChoice.NO),
    ],
)
def test_each_permission_option_answers_the_gate(option_id: str, answer: ApprovalChoice) -> None:
    assert answer_of(APPROVAL, chosen(option_id)) is answer


def test_a_cancelled_permission_request_declines() -> None:
    assert answer_of(APPROVAL, CANCELLED) is ApprovalChoice.NO


def test_a_confirm_is_answered_yes_or_no_and_a_cancel_is_no_answer() -> None:
    question = ConfirmQuestion("Proceed?")
    assert answer_of(question, chosen("yes")) is True
    assert answer_of(question, chosen("no")) is False
    assert answer_of(question, CANCELLED) is None


def test_a_select_offers_each_choice_and_answers_its_index() -> None:
    question = SelectQuestion("Which node?", ("alpha", "beta"))
    assert [option.name for option in options_for(question)] == ["alpha", "beta"]
    assert answer_of(question, chosen("1")) == 1
    assert answer_of(question, chosen("7")) is None


def test_a_title_quotes_each_argument_as_a_shell_needs_it() -> None:
    assert tool_title("remove", ("stream", "rm", "my stream; rm -rf /")) == (
        "stream rm 'my stream; rm -rf /'"
    )


def test_a_streamed_answer_is_not_sent_again_whole() -> None:
    writer = UpdateWriter(ToolSet())
    piece = writer.delta(TextDeltaEvent("Hel"))
    assert isinstance(piece, AgentMessageChunk)
    assert writer.event(TextEvent("Hello")) is None


def test_an_answer_that_streamed_nothing_is_sent_whole() -> None:
    update = UpdateWriter(ToolSet()).event(TextEvent("Hello", final=True))
    assert isinstance(update, AgentMessageChunk)
    assert isinstance(update.content, TextContentBlock)
    assert update.content.text == "Hello"
