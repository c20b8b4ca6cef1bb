"""A run's questions put to an A2A caller in words, and the caller's next message read back."""

from __future__ import annotations

from fisk_ai.serve.a2a_http.questions import answer_from_text, question_text
from fisk_ai.tools.questions import (
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    DeclineWithReason,
    InputQuestion,
    SelectQuestion,
)

APPROVAL = ApprovalQuestion(
    tool_use_id="tu_1",
    tool_name="drain",
    command="drain",
    display="drain node-1",
    trigger="ai:confirm",
    argv=("drain", "node 1"),
)


def test_an_approval_shows_each_argument_quoted_and_the_answers_it_takes() -> None:
    words = question_text(APPROVAL)

    assert "drain 'node 1'" in words
    assert "ai:confirm" in words
    assert "once, always" in words


def test_once_and_yes_run_the_command_once() -> None:
    assert answer_from_text(APPROVAL, " Once ") is ApprovalChoice.ONCE
    assert answer_from_text(APPROVAL, "yes") is ApprovalChoice.ONCE


def test_always_stands_for_the_conversation() -> None:
    assert answer_from_text(APPROVAL, "always") is ApprovalChoice.ALWAYS


def test_a_plain_no_declines() -> None:
    assert answer_from_text(APPROVAL, "no") is ApprovalChoice.NO


def test_a_no_with_words_declines_with_them_as_the_reason() -> None:
    assert answer_from_text(APPROVAL, "No, it is peak hour") == DeclineWithReason("it is peak hour")


def test_anything_else_declines_rather_than_running_the_command() -> None:
    assert answer_from_text(APPROVAL, "maybe later") == DeclineWithReason("maybe later")
    assert answer_from_text(APPROVAL, "") is ApprovalChoice.NO


def test_a_confirm_takes_yes_or_no_and_nothing_else() -> None:
    question = ConfirmQuestion("Restart the node?")

    assert answer_from_text(question, "YES") is True
    assert answer_from_text(question, "no") is False
    assert answer_from_text(question, "perhaps") is None


def test_a_select_takes_an_option_or_its_number() -> None:
    question = SelectQuestion("Which region?", ("eu-west", "us-east"))

    assert "2. us-east" in question_text(question)
    assert answer_from_text(question, "US-East") == 1
    assert answer_from_text(question, "1") == 0
    assert answer_from_text(question, "3") is None


def test_an_input_takes_the_text_or_its_default_when_empty() -> None:
    question = InputQuestion("Which node?", default="node-1")

    assert answer_from_text(question, "node-7") == "node-7"
    assert answer_from_text(question, "  ") == "node-1"
