"""The user guide's request and reply examples are normative: each decodes as what it shows."""

from __future__ import annotations

import json

import pytest

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import InvalidMessage
from fisk_ai.a2a.messages import (
    Ack,
    ElicitReplyApprove,
    ElicitRequestApprove,
    ElicitWaiting,
    EventText,
    RequestAnswer,
    RequestPrompt,
    RequestRead,
)
from fisk_ai.a2a.vocabulary import AnswerField, AnswerKind, Direction, ElicitChoice
from tests.a2a.user_guide_requests import FIRST_PROMPT, FOLLOW_UP, READ

LATE_ANSWER = b"""{
  "protocol": "io.choria.fisk-ai.v1.request.answer",
  "id": "3Hzms0ZgSN940AmUYc1fOpEWVk7",
  "request": "docs4",
  "conversation": "docs1",
  "sequence": 0,
  "time": "2026-08-16T12:40:03Z",
  "sender": {"name": "peer1"},
  "conversation_token": "3Hzmp8VqrKL42NmXcPd7bTgWfR1",
  "answer": {
    "tool_use_id": "toolu_01A9bK2mNpQr",
    "kind": "approve",
    "answer": "choice",
    "choice": "once"
  }
}"""

APPROVE_ANSWER = b"""{
  "protocol": "io.choria.fisk-ai.v1.elicit.reply.approve",
  "id": "3Hzq8TwoXNuV1YtuEjZmiH9PNya",
  "request": "docs1",
  "conversation": "docs1",
  "sequence": 0,
  "time": "2026-08-16T11:24:19.310422Z",
  "sender": {"name": "peer1"},
  "question_id": "3Hzq7RvnWMtU0XstDiYlhG8OMxz",
  "choice": "once"
}"""

WAITING = b"""{
  "protocol": "io.choria.fisk-ai.v1.elicit.waiting",
  "id": "3Hzq9UxpYOvW2ZuvFk0njI0QOzb",
  "request": "docs1",
  "conversation": "docs1",
  "sequence": 0,
  "time": "2026-08-16T11:25:59.104812Z",
  "sender": {"name": "peer1"},
  "question_id": "3Hzq7RvnWMtU0XstDiYlhG8OMxz"
}"""

ACK = b"""{"protocol":"io.choria.fisk-ai.v1.ack","id":"3Hzmp3SCMH824UgPUV6bKqBUSh3",
 "request":"docs1","conversation":"docs1","sequence":1,"time":"2026-08-16T11:24:10.749134Z",
 "sender":{"name":"nats-worker"},"recipient":{"name":"peer1"},"accepted":true,
 "conversation_token":"3Hzmp8VqrKL42NmXcPd7bTgWfR1"}"""

TEXT_EVENT = b"""{"protocol":"io.choria.fisk-ai.v1.event.text","id":"3Hzmp8kRt1BqA4dQ2v9XnLcYm2T",
 "request":"docs1","conversation":"docs1","sequence":2,"time":"2026-08-16T11:24:11.104217Z",
 "sender":{"name":"nats-worker"},"block":{"text":"the stream is gone","final":true}}"""

APPROVE_QUESTION = b"""{
  "protocol": "io.choria.fisk-ai.v1.elicit.request.approve",
  "id": "3Hzq6PkmVLsT9WqrChXkgF7NLwy",
  "request": "docs1",
  "conversation": "docs1",
  "sequence": 4,
  "time": "2026-08-16T11:24:11.912084Z",
  "sender": {"name": "nats-worker"},
  "recipient": {"name": "peer1"},
  "question_id": "3Hzq7RvnWMtU0XstDiYlhG8OMxz",
  "tool_use_id": "toolu_01A9bK2mNpQr",
  "command": "stream rm",
  "display": "stream rm ORDERS --force",
  "tag": "ai:confirm",
  "wait_ms": 120000
}"""

CALLER_EXAMPLES = [FIRST_PROMPT, FOLLOW_UP, READ, LATE_ANSWER, APPROVE_ANSWER, WAITING]
AGENT_EXAMPLES = [ACK, TEXT_EVENT, APPROVE_QUESTION]


@pytest.mark.parametrize("example", CALLER_EXAMPLES)
def test_a_callers_example_reencodes_to_the_same_json(example: bytes) -> None:
    message = decode(example, direction=Direction.TO_AGENT)

    assert json.loads(encode(message)) == json.loads(example)


@pytest.mark.parametrize("example", AGENT_EXAMPLES)
def test_an_agents_example_reencodes_to_the_same_json(example: bytes) -> None:
    message = decode(example, direction=Direction.TO_CALLER)

    assert json.loads(encode(message)) == json.loads(example)


def test_the_first_prompt_opens_a_conversation() -> None:
    message = decode(FIRST_PROMPT, direction=Direction.TO_AGENT)

    assert isinstance(message, RequestPrompt)
    assert message.request == "docs1"
    assert message.prompt == "how many streams are there"
    assert message.conversation_token is None
    assert message.stream is True


def test_the_follow_up_joins_the_conversation_by_token() -> None:
    message = decode(FOLLOW_UP, direction=Direction.TO_AGENT)

    assert isinstance(message, RequestPrompt)
    assert (message.request, message.conversation) == ("docs2", "docs1")
    assert message.conversation_token == "3Hzmp8VqrKL42NmXcPd7bTgWfR1"


def test_the_read_asks_for_two_hundred_blocks() -> None:
    message = decode(READ, direction=Direction.TO_AGENT)

    assert isinstance(message, RequestRead)
    assert message.replay == 200


def test_the_late_answer_approves_the_call_once() -> None:
    message = decode(LATE_ANSWER, direction=Direction.TO_AGENT)

    assert isinstance(message, RequestAnswer)
    assert message.answer.kind is AnswerKind.APPROVE
    assert message.answer.answer is AnswerField.CHOICE
    assert message.answer.choice is ElicitChoice.ONCE
    assert message.answer.tool_use_id == "toolu_01A9bK2mNpQr"


def test_the_approval_answer_and_the_waiting_name_the_question() -> None:
    answer = decode(APPROVE_ANSWER, direction=Direction.TO_AGENT)
    waiting = decode(WAITING, direction=Direction.TO_AGENT)

    assert isinstance(answer, ElicitReplyApprove)
    assert isinstance(waiting, ElicitWaiting)
    assert answer.question_id == waiting.question_id == "3Hzq7RvnWMtU0XstDiYlhG8OMxz"
    assert answer.choice is ElicitChoice.ONCE


def test_the_ack_hands_back_the_conversation_token_at_sequence_one() -> None:
    message = decode(ACK, direction=Direction.TO_CALLER)

    assert isinstance(message, Ack)
    assert message.accepted is True
    assert message.sequence == 1
    assert message.conversation_token == "3Hzmp8VqrKL42NmXcPd7bTgWfR1"


def test_the_text_event_marks_the_final_answer() -> None:
    message = decode(TEXT_EVENT, direction=Direction.TO_CALLER)

    assert isinstance(message, EventText)
    assert message.block.final is True


def test_the_approval_question_carries_its_window() -> None:
    message = decode(APPROVE_QUESTION, direction=Direction.TO_CALLER)

    assert isinstance(message, ElicitRequestApprove)
    assert message.wait_ms == 120_000
    assert message.tag == "ai:confirm"


def test_the_guides_refused_resume_is_refused_at_the_prompt() -> None:
    document = json.loads(FIRST_PROMPT)
    document["protocol"] = "io.choria.fisk-ai.v1.request.resume"
    document["conversation_token"] = "3Hzmp8VqrKL42NmXcPd7bTgWfR1"

    with pytest.raises(InvalidMessage) as caught:
        decode(json.dumps(document).encode(), direction=Direction.TO_AGENT)

    assert caught.value.service_code == 400
    assert "request.resume.json" in str(caught.value)
    assert "at /prompt" in str(caught.value)
