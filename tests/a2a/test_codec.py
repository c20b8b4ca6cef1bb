from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from fisk_ai.a2a.codec import DEFAULT_MAX_MESSAGE_SIZE, decode, encode
from fisk_ai.a2a.errors import (
    A2AError,
    InvalidMessage,
    MessageTooLarge,
    UnexpectedProtocol,
    UnknownProtocol,
)
from fisk_ai.a2a.messages import (
    Ack,
    EventText,
    Message,
    RequestPrompt,
    TerminalError,
    TerminalResult,
    TextBody,
    UnknownEvent,
    reply_to,
)
from fisk_ai.a2a.vocabulary import Direction, ErrorCode, ProtocolId, StopReason
from tests.a2a.samples import AGENT, EVERY_MESSAGE, PROMPT, message_id


def _header(protocol: str, **fields: Any) -> dict[str, Any]:
    return {
        "protocol": protocol,
        "id": "3Hzmp2RBLG713TfOTU5aJpATRg2",
        "request": "docs1",
        "conversation": "docs1",
        "sequence": 0,
        "time": "2026-08-16T11:00:00Z",
        "sender": {"name": "peer1"},
        **fields,
    }


def _bytes(document: dict[str, Any]) -> bytes:
    return json.dumps(document).encode()


def _prompt(**fields: Any) -> bytes:
    return _bytes(_header(ProtocolId.REQUEST_PROMPT, prompt="how many streams", **fields))


def _refusal(data: bytes, direction: Direction = Direction.TO_AGENT) -> A2AError:
    with pytest.raises(A2AError) as caught:
        decode(data, direction=direction)
    return caught.value


@pytest.mark.parametrize("message", EVERY_MESSAGE, ids=message_id)
def test_every_kind_round_trips(message: Message) -> None:
    protocol = ProtocolId(message.protocol)

    assert decode(encode(message), direction=protocol.direction) == message


def test_a_go_peers_nanoseconds_survive_a_decode_and_encode() -> None:
    message = decode(_prompt(time="2026-08-16T11:00:00.123456789Z"), direction=Direction.TO_AGENT)
    assert json.loads(encode(message))["time"] == "2026-08-16T11:00:00.123456789Z"


def test_a_wire_time_still_compares_as_a_datetime() -> None:
    message = decode(_prompt(time="2026-08-16T11:00:00.123456789Z"), direction=Direction.TO_AGENT)
    assert message.time == datetime(2026, 8, 16, 11, 0, 0, 123456, tzinfo=UTC)


def test_fields_left_at_their_zero_value_are_left_out() -> None:
    ack = reply_to(PROMPT, Ack, sender=AGENT, sequence=1, accepted=True)

    sent = json.loads(encode(ack))

    assert set(sent) == {
        "protocol",
        "id",
        "request",
        "conversation",
        "sequence",
        "time",
        "sender",
        "recipient",
        "accepted",
    }


def test_an_answer_of_false_zero_or_empty_is_still_sent() -> None:
    from tests.a2a.samples import CALLER_MESSAGES

    sent = [json.loads(encode(message)) for message in CALLER_MESSAGES]

    answers = {document["protocol"].rsplit(".", 1)[1]: document for document in sent}
    assert answers["confirm"]["confirmed"] is False
    assert answers["select"]["index"] == 0
    assert answers["input"]["value"] == ""


def test_the_protocol_id_leads_the_message() -> None:
    sent = encode(PROMPT)

    assert sent.startswith(b'{"protocol":"io.choria.fisk-ai.v1.request.prompt",')


def test_an_oversized_message_is_refused_before_it_is_decoded() -> None:
    not_even_json = b"\xff" * (DEFAULT_MAX_MESSAGE_SIZE + 1)

    refusal = _refusal(not_even_json)

    assert isinstance(refusal, MessageTooLarge)
    assert refusal.service_code == 400


def test_the_size_cap_is_configurable() -> None:
    data = _prompt()

    with pytest.raises(MessageTooLarge) as caught:
        decode(data, direction=Direction.TO_AGENT, max_size=len(data) - 1)

    assert caught.value.limit == len(data) - 1


def test_a_message_at_the_cap_is_accepted() -> None:
    data = _prompt()

    message = decode(data, direction=Direction.TO_AGENT, max_size=len(data))

    assert isinstance(message, RequestPrompt)


def test_an_outgoing_message_over_the_cap_is_refused_as_our_failure() -> None:
    long = reply_to(PROMPT, EventText, sender=AGENT, sequence=2, block=TextBody(text="x" * 2048))

    with pytest.raises(MessageTooLarge) as caught:
        encode(long, max_size=1024)

    assert caught.value.service_code == 500


def test_malformed_json_is_refused_with_a_400() -> None:
    refusal = _refusal(b'{"protocol": "io.choria.fisk-ai.v1.request.prompt",')

    assert isinstance(refusal, InvalidMessage)
    assert refusal.service_code == 400
    assert "not valid JSON" in str(refusal)


def test_a_json_value_that_is_not_an_object_is_refused() -> None:
    refusal = _refusal(b'["a", "list"]')

    assert isinstance(refusal, InvalidMessage)
    assert refusal.service_code == 400


def test_text_that_is_not_utf8_is_refused() -> None:
    refusal = _refusal(_prompt().replace(b"how many", b"how \xe9 many"))

    assert isinstance(refusal, InvalidMessage)
    assert "UTF-8" in str(refusal)


def test_a_nan_is_not_a_json_number() -> None:
    data = _prompt(budget={"max_tokens": 1}).replace(b'"max_tokens": 1', b'"max_tokens": NaN')

    refusal = _refusal(data)

    assert isinstance(refusal, InvalidMessage)


def test_a_number_too_large_for_a_float_is_refused_with_a_400() -> None:
    data = _prompt(budget={"max_tokens": 1}).replace(b'"max_tokens": 1', b'"max_tokens": 1e999')

    refusal = _refusal(data)

    assert isinstance(refusal, InvalidMessage)
    assert refusal.service_code == 400
    assert str(refusal) == "the message holds the number 1e999, which is out of range"


def test_an_integer_of_5000_digits_is_refused_naming_its_length() -> None:
    huge = b"9" * 5000
    data = _prompt(budget={"max_tokens": 1}).replace(b'"max_tokens": 1', b'"max_tokens": ' + huge)

    refusal = _refusal(data)

    assert isinstance(refusal, InvalidMessage)
    assert refusal.service_code == 400
    assert "an integer of 5000 digits" in str(refusal)


def test_a_missing_required_field_is_refused_naming_it() -> None:
    document = _header(ProtocolId.REQUEST_PROMPT)

    refusal = _refusal(_bytes(document))

    assert isinstance(refusal, InvalidMessage)
    assert refusal.service_code == 400
    assert "'prompt' is a required property" in str(refusal)


def test_a_wrong_type_header_field_is_refused_naming_it() -> None:
    document = _header(ProtocolId.REQUEST_PROMPT, prompt="hi")
    document["sequence"] = "1"

    refusal = _refusal(_bytes(document))

    assert isinstance(refusal, InvalidMessage)
    assert "/sequence" in str(refusal)


def test_a_message_without_a_protocol_is_refused() -> None:
    document = _header(ProtocolId.REQUEST_PROMPT, prompt="hi")
    del document["protocol"]

    refusal = _refusal(_bytes(document))

    assert isinstance(refusal, InvalidMessage)
    assert "protocol" in str(refusal)


def test_an_unknown_protocol_id_is_refused() -> None:
    refusal = _refusal(_bytes(_header("io.choria.fisk-ai.v1.request.dance", prompt="hi")))

    assert isinstance(refusal, UnknownProtocol)
    assert refusal.service_code == 400
    assert "io.choria.fisk-ai.v1.request.dance" in str(refusal)


def test_a_known_protocol_sent_the_wrong_way_is_refused() -> None:
    ack = encode(reply_to(PROMPT, Ack, sender=AGENT, sequence=1, accepted=True))

    refusal = _refusal(ack, Direction.TO_AGENT)

    assert isinstance(refusal, UnexpectedProtocol)
    assert refusal.service_code == 400


def test_a_request_tag_longer_than_a_subject_token_allows_is_refused() -> None:
    refusal = _refusal(_prompt(request="r" * 65))

    assert isinstance(refusal, InvalidMessage)
    assert "/request" in str(refusal)


@pytest.mark.parametrize("request_tag", ["docs.1", "docs*", "docs>", "do cs", "docs1\n"])
def test_a_request_tag_that_would_reshape_a_subject_is_refused(request_tag: str) -> None:
    refusal = _refusal(_prompt(request=request_tag))

    assert isinstance(refusal, InvalidMessage)


def test_a_sender_name_outside_the_identity_characters_is_refused() -> None:
    refusal = _refusal(_prompt(sender={"name": "peer one"}))

    assert isinstance(refusal, InvalidMessage)
    assert "/sender/name" in str(refusal)


def test_a_time_without_a_zone_is_refused() -> None:
    refusal = _refusal(_prompt(time="2026-08-16T11:00:00"))

    assert isinstance(refusal, InvalidMessage)
    assert "/time" in str(refusal)


def test_a_resume_carrying_a_prompt_is_refused_naming_the_prompt() -> None:
    document = _header(ProtocolId.REQUEST_RESUME, conversation_token="tok", prompt="...")

    refusal = _refusal(_bytes(document))

    assert refusal.service_code == 400
    assert "request.resume.json" in str(refusal)
    assert "/prompt" in str(refusal)


def test_an_answer_that_does_not_fit_its_kind_is_refused() -> None:
    answer = {"tool_use_id": "toolu_1", "kind": "approve", "answer": "value", "value": "yes"}
    document = _header(ProtocolId.REQUEST_ANSWER, conversation_token="tok", answer=answer)

    refusal = _refusal(_bytes(document))

    assert isinstance(refusal, InvalidMessage)
    assert refusal.service_code == 400


def test_an_answer_naming_a_field_it_does_not_carry_is_refused() -> None:
    answer = {"tool_use_id": "toolu_1", "kind": "confirm", "answer": "confirmed"}
    document = _header(ProtocolId.REQUEST_ANSWER, conversation_token="tok", answer=answer)

    refusal = _refusal(_bytes(document))

    assert isinstance(refusal, InvalidMessage)


def test_unknown_properties_are_dropped() -> None:
    data = _prompt(colour="blue", sender={"name": "peer1", "shoe_size": 9})

    message = decode(data, direction=Direction.TO_AGENT)
    resent = json.loads(encode(message))

    assert "colour" not in resent
    assert resent["sender"] == {"name": "peer1"}


def test_an_unknown_stop_reason_is_carried() -> None:
    document = _header(ProtocolId.RESULT, stop_reason="context_window_full", text="partial")

    message = decode(_bytes(document), direction=Direction.TO_CALLER)

    assert isinstance(message, TerminalResult)
    assert message.stop_reason == "context_window_full"


def test_a_known_stop_reason_arrives_as_the_enum() -> None:
    document = _header(ProtocolId.RESULT, stop_reason="end_turn")

    message = decode(_bytes(document), direction=Direction.TO_CALLER)

    assert isinstance(message, TerminalResult)
    assert message.stop_reason is StopReason.END_TURN


def test_a_stop_reason_a_receiver_could_not_display_safely_is_refused() -> None:
    document = _header(ProtocolId.RESULT, stop_reason="\x1b[31mred")

    refusal = _refusal(_bytes(document), Direction.TO_CALLER)

    assert isinstance(refusal, InvalidMessage)


def test_an_unknown_error_code_is_carried_and_a_known_one_is_the_enum() -> None:
    unknown = _header(ProtocolId.ERROR, error="no", code="quota_spent")
    known = _header(ProtocolId.ERROR, error="no", code="capacity")

    carried = decode(_bytes(unknown), direction=Direction.TO_CALLER)
    named = decode(_bytes(known), direction=Direction.TO_CALLER)

    assert isinstance(carried, TerminalError)
    assert isinstance(named, TerminalError)
    assert carried.code == "quota_spent"
    assert named.code is ErrorCode.CAPACITY


def test_an_unknown_event_kind_is_carried_with_the_peers_bytes() -> None:
    data = _bytes(
        _header("io.choria.fisk-ai.v1.event.citation", sequence=3, block={"url": "https://x"})
    )

    message = decode(data, direction=Direction.TO_CALLER)

    assert isinstance(message, UnknownEvent)
    assert message.kind == "citation"
    assert message.block == {"url": "https://x"}
    assert message.raw == data


def test_an_unknown_event_kind_still_needs_a_valid_frame() -> None:
    document = _header("io.choria.fisk-ai.v1.event.citation", block={"url": "https://x"})
    del document["sequence"]

    refusal = _refusal(_bytes(document), Direction.TO_CALLER)

    assert isinstance(refusal, InvalidMessage)
    assert "sequence" in str(refusal)


def test_an_unknown_event_kind_the_sender_must_have_understood_is_refused() -> None:
    document = _header(
        "io.choria.fisk-ai.v1.event.citation", block={"url": "https://x"}, must_understand=True
    )

    refusal = _refusal(_bytes(document), Direction.TO_CALLER)

    assert isinstance(refusal, UnknownProtocol)


def test_an_unknown_event_kind_is_not_sent_to_an_agent() -> None:
    document = _header("io.choria.fisk-ai.v1.event.citation", block={})

    refusal = _refusal(_bytes(document), Direction.TO_AGENT)

    assert isinstance(refusal, UnexpectedProtocol)


def test_an_unknown_event_encodes_what_was_understood_of_it() -> None:
    data = _bytes(_header("io.choria.fisk-ai.v1.event.citation", block={"url": "https://x"}))
    message = decode(data, direction=Direction.TO_CALLER)

    resent = json.loads(encode(message))

    assert resent["protocol"] == "io.choria.fisk-ai.v1.event.citation"
    assert resent["block"] == {"url": "https://x"}
    assert "raw" not in resent


def test_a_refusal_is_one_line_and_bounded_whatever_the_sender_sent() -> None:
    refusal = _refusal(_prompt(request="x" * 10_000))

    assert "\n" not in str(refusal)
    assert len(str(refusal)) < 400


def test_an_outgoing_message_the_receiver_would_refuse_is_refused_here() -> None:
    # A model cannot hold a message the schema refuses, so build one that bypasses it.
    impossible = RequestPrompt.model_construct(**{**PROMPT.__dict__, "prompt": ""})

    with pytest.raises(InvalidMessage) as caught:
        encode(impossible)

    assert caught.value.service_code == 500


def test_importing_the_package_leaves_jsonschema_unloaded() -> None:
    probe = "import sys, fisk_ai.a2a; print('jsonschema' in sys.modules)"

    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()

    assert loaded == "False"
