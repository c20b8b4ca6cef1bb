from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from fisk_ai.a2a.messages import (
    Ack,
    Answer,
    Cancel,
    EventText,
    Identity,
    RequestPrompt,
    TerminalResult,
    TextBody,
    UnknownEvent,
    WireUsage,
    message_type,
    new_request,
    reply_to,
)
from fisk_ai.a2a.vocabulary import (
    AnswerField,
    AnswerKind,
    Direction,
    ElicitChoice,
    ErrorCode,
    ProtocolId,
    StopReason,
)
from fisk_ai.llm.types import Usage
from fisk_ai.util.ids import KSUID_LENGTH

CALLER = Identity(name="peer1")
AGENT = Identity(name="nats-worker")


def test_there_are_thirty_protocol_ids_all_in_the_v1_namespace() -> None:
    assert len(ProtocolId) == 30
    assert all(protocol.startswith("io.choria.fisk-ai.v1.") for protocol in ProtocolId)


def test_every_protocol_id_names_the_model_that_carries_it() -> None:
    for protocol in ProtocolId:
        assert message_type(protocol).model_fields["protocol"].default is protocol


@pytest.mark.parametrize(
    ("protocol", "direction"),
    [
        (ProtocolId.REQUEST_PROMPT, Direction.TO_AGENT),
        (ProtocolId.REQUEST_READ, Direction.TO_AGENT),
        (ProtocolId.ELICIT_REPLY_NO_OPERATOR, Direction.TO_AGENT),
        (ProtocolId.ELICIT_WAITING, Direction.TO_AGENT),
        (ProtocolId.CANCEL, Direction.TO_AGENT),
        (ProtocolId.TOOL_REQUEST, Direction.TO_AGENT),
        (ProtocolId.DISCOVERY_REQUEST, Direction.TO_AGENT),
        (ProtocolId.ACK, Direction.TO_CALLER),
        (ProtocolId.EVENT_STATUS, Direction.TO_CALLER),
        (ProtocolId.ELICIT_REQUEST_APPROVE, Direction.TO_CALLER),
        (ProtocolId.RESULT, Direction.TO_CALLER),
        (ProtocolId.ERROR, Direction.TO_CALLER),
        (ProtocolId.TOOL_REPLY, Direction.TO_CALLER),
        (ProtocolId.DISCOVERY_REPLY, Direction.TO_CALLER),
    ],
)
def test_each_protocol_travels_one_way(protocol: ProtocolId, direction: Direction) -> None:
    assert protocol.direction is direction


def test_a_new_request_stamps_one_fresh_ksuid_as_id_request_and_conversation() -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)

    prompt = new_request(RequestPrompt, sender=CALLER, recipient=AGENT, prompt="hi")

    assert len(prompt.id) == KSUID_LENGTH
    assert prompt.id == prompt.request == prompt.conversation
    assert prompt.sequence == 0
    assert prompt.time >= before
    assert prompt.time.utcoffset() == timedelta(0)
    assert prompt.recipient == AGENT


def test_a_caller_may_choose_the_request_tag_before_sending() -> None:
    prompt = new_request(RequestPrompt, sender=CALLER, request="docs1", prompt="hi")

    assert (prompt.request, prompt.conversation) == ("docs1", "docs1")
    assert prompt.id != "docs1"


def test_a_follow_up_keeps_the_conversation_it_continues() -> None:
    prompt = new_request(
        RequestPrompt, sender=CALLER, request="docs2", conversation="docs1", prompt="hi"
    )

    assert (prompt.request, prompt.conversation) == ("docs2", "docs1")


def test_two_requests_never_share_an_id() -> None:
    first = new_request(Cancel, sender=CALLER)
    second = new_request(Cancel, sender=CALLER)

    assert first.id != second.id


def test_a_reply_echoes_request_and_conversation_and_goes_back_to_the_sender() -> None:
    prompt = new_request(
        RequestPrompt, sender=CALLER, request="docs2", conversation="docs1", prompt="hi"
    )

    ack = reply_to(prompt, Ack, sender=AGENT, sequence=1, accepted=True)

    assert ack.id not in (prompt.id, prompt.request)
    assert (ack.request, ack.conversation) == ("docs2", "docs1")
    assert ack.sender == AGENT
    assert ack.recipient == CALLER
    assert ack.sequence == 1


def test_a_request_tag_over_sixty_four_characters_cannot_be_built() -> None:
    with pytest.raises(ValidationError):
        new_request(RequestPrompt, sender=CALLER, request="r" * 65, prompt="hi")


def test_an_empty_prompt_cannot_be_built() -> None:
    with pytest.raises(ValidationError):
        new_request(RequestPrompt, sender=CALLER, prompt="")


def test_an_identity_name_outside_the_subject_characters_cannot_be_built() -> None:
    with pytest.raises(ValidationError):
        Identity(name="nats.worker")


def test_messages_are_frozen() -> None:
    prompt = new_request(RequestPrompt, sender=CALLER, prompt="hi")

    with pytest.raises(ValidationError):
        prompt.prompt = "changed"  # type: ignore[misc]


def test_a_stop_reason_this_build_does_not_name_is_kept_as_text() -> None:
    prompt = new_request(RequestPrompt, sender=CALLER, prompt="hi")

    result = reply_to(prompt, TerminalResult, sender=AGENT, sequence=2, stop_reason="paused")

    assert result.stop_reason == "paused"
    assert not isinstance(result.stop_reason, StopReason)


def test_stop_reasons_include_deferred() -> None:
    assert StopReason("deferred") is StopReason.DEFERRED


def test_the_error_code_vocabulary_is_closed_as_an_enum() -> None:
    assert {code.value for code in ErrorCode} == {
        "rejected",
        "capacity",
        "duplicate_request",
        "draining",
        "failed",
        "crashed",
        "not_started",
        "deferred",
        "suspended",
        "canceled",
        "unknown_conversation",
        "conversation_busy",
        "turn_not_taken",
        "budget_exhausted",
        "unknown_call",
        "already_answered",
        "answer_too_large",
    }


@pytest.mark.parametrize(
    ("kind", "field", "fields"),
    [
        (AnswerKind.APPROVE, AnswerField.CHOICE, {"choice": ElicitChoice.NO}),
        (AnswerKind.CONFIRM, AnswerField.CONFIRMED, {"confirmed": False}),
        (AnswerKind.SELECT, AnswerField.VALUE, {"value": "east"}),
        (AnswerKind.INPUT, AnswerField.VALUE, {"value": ""}),
        (AnswerKind.INPUT, AnswerField.NO_OPERATOR, {}),
    ],
)
def test_an_answer_that_fits_its_kind_is_accepted(
    kind: AnswerKind, field: AnswerField, fields: dict[str, object]
) -> None:
    answer = Answer(tool_use_id="toolu_1", kind=kind, answer=field, **fields)

    assert answer.answer is field


def test_a_select_is_not_answered_by_choice() -> None:
    with pytest.raises(ValidationError, match="select questions are not answered with choice"):
        Answer(
            tool_use_id="toolu_1",
            kind=AnswerKind.SELECT,
            answer=AnswerField.CHOICE,
            choice=ElicitChoice.ONCE,
        )


def test_an_input_answer_longer_than_4096_characters_is_refused() -> None:
    with pytest.raises(ValidationError):
        Answer(tool_use_id="t", kind=AnswerKind.INPUT, answer=AnswerField.VALUE, value="x" * 4097)


def test_wire_usage_counts_cached_input_inside_input_tokens() -> None:
    usage = Usage(input_tokens=100, output_tokens=50, cache_read_tokens=800, cache_create_tokens=20)

    wire = WireUsage.from_usage(usage, llm_calls=3, tool_calls=2)

    assert wire.input_tokens == 920
    assert (wire.llm_calls, wire.tool_calls) == (3, 2)
    assert wire.to_usage() == usage


def test_a_peers_usage_with_more_cache_than_input_never_goes_negative() -> None:
    wire = WireUsage(input_tokens=10, cache_read_tokens=50)

    assert wire.to_usage().input_tokens == 0


def test_an_unknown_event_cannot_claim_a_known_kind() -> None:
    prompt = new_request(RequestPrompt, sender=CALLER, prompt="hi")

    with pytest.raises(ValidationError):
        reply_to(
            prompt, UnknownEvent, sender=AGENT, sequence=2, protocol=ProtocolId.EVENT_TEXT, block={}
        )


def test_an_event_holds_one_block() -> None:
    prompt = new_request(RequestPrompt, sender=CALLER, prompt="hi")

    event = reply_to(prompt, EventText, sender=AGENT, sequence=2, block=TextBody(text="hello"))

    assert event.block.text == "hello"
    assert event.protocol is ProtocolId.EVENT_TEXT
