from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from fisk_ai.llm.types import (
    Message,
    ResultImage,
    Role,
    TextBlock,
    ToolResultBlock,
)
from fisk_ai.sessions import (
    Assistant,
    Claim,
    Decision,
    Deferred,
    JournalError,
    MemoryRevisions,
    Meta,
    Payload,
    Record,
    Terminal,
    TerminalReason,
    ToolResult,
    Unrecognized,
    User,
    decode_record,
    encode_record,
)
from fisk_ai.sessions.records import Timestamp, format_time, parse_time
from tests.sessions.builders import CREATED, fingerprint
from tests.sessions.record_kinds import ASSISTANT_MESSAGE, EVERY_KIND


@pytest.mark.parametrize("payload", EVERY_KIND, ids=lambda payload: type(payload).__name__)
def test_every_kind_round_trips(payload: Payload) -> None:
    record = Record(7, payload, optional=isinstance(payload, MemoryRevisions))

    assert decode_record(encode_record(record)) == record


@pytest.mark.parametrize("payload", EVERY_KIND, ids=lambda payload: type(payload).__name__)
def test_the_envelope_names_the_protocol_and_nests_the_payload_under_its_kind(
    payload: Payload,
) -> None:
    stored = json.loads(encode_record(Record(7, payload)))

    kind = stored["protocol"].removeprefix("io.choria.fisk-ai.v1.session.")
    assert list(stored)[:2] == ["seq", "protocol"]
    assert stored["seq"] == 7
    assert kind in stored
    assert set(stored) - {"seq", "protocol", "optional"} == {kind}


def test_a_record_is_one_compact_line_without_a_newline() -> None:
    encoded = encode_record(Record(1, Decision("stream_rm")))

    assert encoded == (
        b'{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.decision",'
        b'"decision":{"tool":"stream_rm"}}'
    )


def test_memory_revisions_are_always_written_optional() -> None:
    stored = json.loads(encode_record(Record(4, MemoryRevisions({"k": 1}))))

    assert stored["optional"] is True


def test_optional_is_left_out_when_not_set() -> None:
    assert "optional" not in json.loads(encode_record(Record(4, Decision("x"))))


def test_a_deferred_record_cannot_be_optional() -> None:
    with pytest.raises(ValueError, match="never be optional"):
        encode_record(Record(4, Deferred("toolu_1", "wait"), optional=True))


def test_a_deferred_record_read_as_optional_is_refused() -> None:
    line = (
        b'{"seq":4,"protocol":"io.choria.fisk-ai.v1.session.deferred","optional":true,'
        b'"deferred":{"tool_use_id":"toolu_1","tool_name":"wait"}}'
    )

    with pytest.raises(JournalError, match="deferred record marked optional"):
        decode_record(line)


def test_empty_optional_fields_are_left_out() -> None:
    meta = json.loads(encode_record(Record(1, Meta("run-1", CREATED, fingerprint()))))["meta"]
    assistant = json.loads(
        encode_record(Record(2, Assistant(1, ASSISTANT_MESSAGE, in_tokens=0, out_tokens=0)))
    )["assistant"]
    deferred = json.loads(encode_record(Record(3, Deferred("toolu_1", "wait"))))["deferred"]
    terminal = json.loads(encode_record(Record(4, Terminal(TerminalReason.COMPLETED))))

    # prompt is the one meta field Go writes even when empty.
    assert set(meta) == {"version", "run_id", "created", "fingerprint", "prompt"}
    assert set(assistant) == {"iteration", "message", "in_tokens", "out_tokens"}
    assert set(deferred) == {"tool_use_id", "tool_name"}
    assert terminal["terminal"] == {"reason": "completed"}


def test_thinking_tokens_are_written_only_when_non_zero() -> None:
    def stored(thinking_tokens: int) -> dict[str, object]:
        assistant = Assistant(1, ASSISTANT_MESSAGE, 1, 1, thinking_tokens=thinking_tokens)
        return json.loads(encode_record(Record(2, assistant)))["assistant"]  # type: ignore[no-any-return]

    assert "thinking_tokens" not in stored(0)
    assert stored(12)["thinking_tokens"] == 12


def test_reasoning_effort_is_written_only_when_set() -> None:
    def stored_fingerprint(effort: str) -> dict[str, object]:
        meta = Meta("run-1", CREATED, fingerprint(reasoning_effort=effort))
        return json.loads(encode_record(Record(1, meta)))["meta"]["fingerprint"]  # type: ignore[no-any-return]

    assert "reasoning_effort" not in stored_fingerprint("")
    assert stored_fingerprint("high")["reasoning_effort"] == "high"


def test_the_tool_result_names_its_call_twice() -> None:
    stored = json.loads(encode_record(Record(3, ToolResult(ToolResultBlock("toolu_9", "ok")))))

    assert stored["tool_result"] == {
        "tool_use_id": "toolu_9",
        "result": {"tool_use_id": "toolu_9", "content": "ok"},
    }


def test_times_are_utc_rfc3339_with_the_fraction_trimmed() -> None:
    stored = json.loads(encode_record(Record(1, Meta("run-1", CREATED, fingerprint()))))

    assert stored["meta"]["created"] == "2025-03-04T05:06:07.891Z"


def test_a_nanosecond_time_from_go_is_read() -> None:
    line = (
        b'{"seq":9,"protocol":"io.choria.fisk-ai.v1.session.claim",'
        b'"claim":{"by":"w","claimed":"2025-03-04T07:06:07.123456789+02:00"}}'
    )

    claim = decode_record(line).payload

    assert claim == Claim("w", datetime(2025, 3, 4, 5, 6, 7, 123456, tzinfo=UTC))


def test_absent_additive_fields_read_as_zero() -> None:
    line = (
        b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":'
        b'{"iteration":1,"message":{"role":"assistant","content":[]},'
        b'"in_tokens":5,"out_tokens":6,"some_future_field":1}}'
    )

    assistant = decode_record(line).payload

    assert isinstance(assistant, Assistant)
    assert (assistant.cache_read_tokens, assistant.thinking_tokens, assistant.stop_reason) == (
        0,
        0,
        "",
    )


def test_an_unknown_optional_record_is_carried_for_a_reader_to_skip() -> None:
    line = b'{"seq":5,"protocol":"io.choria.fisk-ai.v1.session.future","optional":true,"future":{}}'

    record = decode_record(line)

    assert record == Record(
        5, Unrecognized("io.choria.fisk-ai.v1.session.future", {"future": {}}), True
    )
    assert json.loads(encode_record(record)) == json.loads(line)


def test_an_unknown_required_record_is_refused_as_newer() -> None:
    line = b'{"seq":5,"protocol":"io.choria.fisk-ai.v1.session.future","future":{}}'

    with pytest.raises(JournalError, match="written by a newer fisk-ai"):
        decode_record(line)


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"protocol":"io.choria.fisk-ai.v1.session.decision","decision":{"tool":"x"}}', "seq"),
        (b'{"seq":0,"protocol":"io.choria.fisk-ai.v1.session.decision"}', "seq"),
        (b'{"seq":2,"decision":{"tool":"x"}}', "no protocol"),
        (b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.decision"}', "lacks its decision"),
        (
            b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.decision","decision":{}}',
            "lacks tool",
        ),
        (
            b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.decision","decision":{"tool":1}}',
            "tool must be a string",
        ),
        (
            b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.decision",'
            b'"decision":{"tool":"x"},"terminal":{"reason":"completed"}}',
            "also carries terminal",
        ),
        (
            b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.terminal",'
            b'"terminal":{"reason":"exploded"}}',
            "not one of completed",
        ),
        (
            b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.user",'
            b'"user":{"message":{"role":"assistant","content":[]}}}',
            "must be a user message",
        ),
        (
            b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":'
            b'{"tool_use_id":"a","result":{"tool_use_id":"b","content":""}}}',
            "answers a but its result names b",
        ),
        (
            b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.claim",'
            b'"claim":{"by":"w","claimed":"2025-03-04T05:06:07"}}',
            "no time zone",
        ),
        (
            b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":'
            b'{"iteration":true,"message":{"role":"assistant","content":[]},'
            b'"in_tokens":1,"out_tokens":1}}',
            "iteration must be an integer",
        ),
        (
            b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":'
            b'{"tool_use_id":"a","result":{"content":"","images":[{"data":"iVBO"}]}}}',
            "images are malformed",
        ),
    ],
)
def test_a_malformed_record_is_refused_saying_why(line: bytes, complaint: str) -> None:
    with pytest.raises(JournalError, match=complaint):
        decode_record(line)


def test_a_tool_results_images_are_kept_beside_its_content() -> None:
    image = ResultImage("image/png", "iVBO")
    record = Record(2, ToolResult(ToolResultBlock("a", "[image 1]", images=(image,))))

    stored = json.loads(encode_record(record))

    assert stored["tool_result"]["result"]["images"] == [
        {"media_type": "image/png", "data": "iVBO"}
    ]


def test_a_result_without_its_own_call_id_takes_the_records() -> None:
    line = (
        b'{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.tool_result",'
        b'"tool_result":{"tool_use_id":"toolu_1","result":{"content":"ok"}}}'
    )

    assert decode_record(line).payload == ToolResult(ToolResultBlock("toolu_1", "ok"))


def test_text_no_utf8_can_carry_still_round_trips() -> None:
    record = Record(2, User(Message(Role.USER, (TextBlock("half \ud800 a pair"),))))

    assert decode_record(encode_record(record)) == record


def test_a_go_time_with_nanoseconds_and_an_offset_round_trips_byte_for_byte() -> None:
    line = (
        b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.claim","claim":{"by":"host-a",'
        b'"claimed":"2026-08-15T13:30:00.123456789+02:00"}}'
    )
    record = decode_record(line)
    assert isinstance(record.payload, Claim)
    assert isinstance(record.payload.claimed, Timestamp)
    assert record.payload.claimed.nanosecond == 789
    assert record.payload.claimed.utcoffset() == timedelta(0)
    assert encode_record(record) == line


def test_a_fresh_timestamp_is_written_to_the_nanosecond_in_utc() -> None:
    stamp = Timestamp.now_utc()
    assert stamp.text.endswith("Z")
    assert format_time(stamp) == stamp.text
    assert parse_time(stamp.text) == stamp


def test_html_characters_are_escaped_as_go_escapes_them() -> None:
    line = encode_record(Record(1, Meta("run-1", CREATED, fingerprint(), prompt="a<b>&c")))
    assert b'"prompt":"a\\u003cb\\u003e\\u0026c"' in line
    payload = decode_record(line).payload
    assert isinstance(payload, Meta)
    assert payload.prompt == "a<b>&c"
