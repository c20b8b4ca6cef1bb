"""The ten v1 session record kinds and their JSON form.

Every record is one JSON object: ``{"seq": N, "protocol": "io.choria.fisk-ai.v1.session.<kind>",
"<kind>": {...}}``, with ``"optional": true`` added on a record a reader may skip. The protocol id
travels in the body, so a record read anywhere can be checked without knowing where it came from,
and a file journal line is byte-for-byte the body a JetStream backend would store.

Payload keys follow the upstream schemas. A field the schema does not require is left out when
empty, as Go's omitempty would, and reads back as its zero value when absent. One extension:
``assistant.thinking_tokens``, which the upstream assistant schema does not have, is written only
when non-zero.

Times are RFC 3339 with up to nine fractional digits, as Go's time.RFC3339Nano writes them. A time
read from a record is a Timestamp, which keeps the text it arrived as (its nanoseconds and its
zone offset included), so a record read and written again is byte-identical.
"""

from __future__ import annotations

import enum
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from fisk_ai.errors import BoundedInputError
from fisk_ai.llm.codec import (
    CodecError,
    images_from_json,
    message_from_json,
    message_to_json,
    tool_result_to_json,
)
from fisk_ai.llm.types import Message, ResultImage, Role, ToolResultBlock
from fisk_ai.sessions.errors import JournalError
from fisk_ai.sessions.fingerprint import Fingerprint, fingerprint_from_json, fingerprint_to_json
from fisk_ai.util import bounded, jsonx

__all__ = [
    "JOURNAL_VERSION",
    "PROTOCOL_PREFIX",
    "Assistant",
    "CallApproval",
    "Claim",
    "Decision",
    "Deferred",
    "MemoryRevisions",
    "Meta",
    "Payload",
    "Record",
    "RecordKind",
    "Terminal",
    "TerminalReason",
    "Timestamp",
    "ToolResult",
    "Unrecognized",
    "User",
    "decode_record",
    "encode_record",
    "format_time",
    "parse_time",
    "record_from_json",
    "record_to_json",
]

JOURNAL_VERSION = 3
PROTOCOL_PREFIX = "io.choria.fisk-ai.v1.session."


class RecordKind(enum.Enum):
    """The kind of a record: its payload key, and the last part of its protocol id."""

    META = "meta"
    ASSISTANT = "assistant"
    USER = "user"
    TOOL_RESULT = "tool_result"
    DEFERRED = "deferred"
    DECISION = "decision"
    CALL_APPROVAL = "call_approval"
    MEMORY_REVISIONS = "memory_revisions"
    TERMINAL = "terminal"
    CLAIM = "claim"

    @property
    def protocol(self) -> str:
        return PROTOCOL_PREFIX + self.value


class TerminalReason(enum.Enum):
    COMPLETED = "completed"
    SUSPENDED = "suspended"
    ERROR = "error"
    BUDGET = "budget"
    MAX_ITERATIONS = "max_iterations"


@dataclass(frozen=True)
class Meta:
    """The first record of every journal: who the run is and what it was configured with."""

    run_id: str
    created: datetime
    fingerprint: Fingerprint
    prompt: str = ""
    interactive: bool = False
    conversation_token: str = ""
    caller: str = ""
    version: int = JOURNAL_VERSION


@dataclass(frozen=True)
class Assistant:
    """One model turn, journaled before any tool it asks for runs."""

    iteration: int
    message: Message
    in_tokens: int
    out_tokens: int
    stop_reason: str = ""
    cache_read_tokens: int = 0
    cache_create_tokens: int = 0
    thinking_tokens: int = 0


@dataclass(frozen=True)
class User:
    """A follow-up turn from the operator in a chat."""

    message: Message


@dataclass(frozen=True)
class ToolResult:
    """The answer to one tool call; ``remote`` when another agent ran it over a2a."""

    result: ToolResultBlock
    remote: bool = False

    @property
    def tool_use_id(self) -> str:
        return self.result.tool_use_id


@dataclass(frozen=True)
class Deferred:
    """A call whose tool will answer later. It is never dispatched again."""

    tool_use_id: str
    tool_name: str
    note: str = ""
    handle: str = ""


@dataclass(frozen=True)
class Decision:
    """A standing grant: the operator approved ``tool`` for the rest of the conversation."""

    tool: str


@dataclass(frozen=True)
class CallApproval:
    """The operator approved one call's next dispatch; a later terminal record spends it."""

    tool_use_id: str
    tool_name: str


@dataclass(frozen=True)
class MemoryRevisions:
    """The store revision of every memory key the run knew when it ended."""

    revisions: Mapping[str, int]

    def __post_init__(self) -> None:
        object.__setattr__(self, "revisions", MappingProxyType(dict(self.revisions)))


@dataclass(frozen=True)
class Terminal:
    """How a run (or one chat turn) ended. A later terminal record supersedes it."""

    reason: TerminalReason
    message: str = ""


@dataclass(frozen=True)
class Claim:
    """A worker taking over the run on resume. Diagnostic only: the fold ignores it."""

    by: str
    claimed: datetime


@dataclass(frozen=True)
class Unrecognized:
    """A record of a kind this build does not know, marked optional by its writer, so a reader
    may pass over it. ``fields`` is every top-level key but seq, protocol and optional."""

    protocol: str
    fields: Mapping[str, Any] = field(default_factory=dict)


Payload = (
    Meta
    | Assistant
    | User
    | ToolResult
    | Deferred
    | Decision
    | CallApproval
    | MemoryRevisions
    | Terminal
    | Claim
    | Unrecognized
)


@dataclass(frozen=True)
class Record:
    seq: int
    payload: Payload
    optional: bool = False


def encode_record(record: Record) -> bytes:
    """One compact JSON object, without a trailing newline, in the bytes Go's encoding/json
    writes for the same record: fields in Go's order, "<", ">", "&", U+2028 and U+2029
    escaped (they can only occur inside strings, so replacing them in the output is exact)."""
    data = record_to_json(record)
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    for character, escape in _GO_HTML_ESCAPES:
        text = text.replace(character, escape)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (possible in model text) has no UTF-8 form; escaped, it round-trips.
        return json.dumps(data, separators=(",", ":")).encode("ascii")


_GO_HTML_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def decode_record(data: bytes) -> Record:
    """Read one record; anything malformed raises JournalError saying what is wrong."""
    try:
        # Kept: the writer escapes a lone surrogate in model text, and the reader keeps it.
        parsed = read_record_json(data)
    except jsonx.JsonError as bad:
        raise JournalError(f"the record {bad}") from None
    return record_from_json(parsed)


RECORD_MAX_DEPTH = 2 * jsonx.MAX_DEPTH
"""A record nests its payload a few levels down, and the tool input inside it may nest as deep as
any document; twice the usual bound leaves room for both and still keeps every reader safe."""


RECORD_MAX_BYTES = 64 * 1024 * 1024
"""Far past any record a run writes (a tool's output is capped well below a megabyte)."""


def read_record_json(data: bytes) -> object:
    """One record line as JSON, or ``JsonError`` completing "the record ...". A lone surrogate
    is kept: the writer escapes one in model text, and the display strips it."""
    try:
        return bounded.loads_json(
            data,
            what="the record",
            max_bytes=RECORD_MAX_BYTES,
            max_depth=RECORD_MAX_DEPTH,
            surrogates=jsonx.Surrogates.KEEP,
            allow_constants=True,
        )
    except BoundedInputError as bad:
        raise jsonx.JsonError(bad.problem) from None


def record_to_json(record: Record) -> dict[str, Any]:
    if record.seq < 1:
        raise ValueError(f"a record's seq starts at 1, not {record.seq}")
    payload = record.payload
    optional = record.optional or isinstance(payload, MemoryRevisions | Unrecognized)
    if optional and isinstance(payload, Deferred):
        raise ValueError("a deferred record must never be optional: skipping it re-runs the call")
    if isinstance(payload, Unrecognized):
        return {"seq": record.seq, "protocol": payload.protocol, "optional": True, **payload.fields}
    kind = _KIND_OF[type(payload)]
    data: dict[str, Any] = {"seq": record.seq, "protocol": kind.protocol}
    if optional:
        data["optional"] = True
    data[kind.value] = _ENCODERS[kind](payload)
    return data


def record_from_json(data: object) -> Record:
    if not isinstance(data, Mapping):
        raise JournalError("the record is not a JSON object")
    seq = data.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise JournalError("the record's seq must be an integer of at least 1")
    optional = data.get("optional", False)
    if not isinstance(optional, bool):
        raise JournalError(f"record {seq}'s optional flag must be true or false")
    protocol = data.get("protocol")
    if not isinstance(protocol, str):
        raise JournalError(f"record {seq} has no protocol")
    kind = _kind_of_protocol(protocol)
    if kind is None:
        if optional:
            fields = {k: v for k, v in data.items() if k not in ("seq", "protocol", "optional")}
            return Record(seq, Unrecognized(protocol, fields), optional=True)
        raise JournalError(
            f"record {seq} has protocol {protocol!r}, which this fisk-ai does not know; "
            "it was written by a newer fisk-ai"
        )
    others = [key for key in data if key != kind.value and key in _PAYLOAD_KEYS]
    if others:
        raise JournalError(f"record {seq} is a {kind.value} record but also carries {others[0]}")
    body = data.get(kind.value)
    if not isinstance(body, Mapping):
        raise JournalError(f"record {seq} lacks its {kind.value} object")
    if kind is RecordKind.DEFERRED and optional:
        raise JournalError(f"record {seq} is a deferred record marked optional, which is invalid")
    try:
        payload = _DECODERS[kind](_Body(body, kind))
    except _FieldError as bad:
        raise JournalError(f"record {seq}: {bad}") from None
    return Record(seq, payload, optional)


class Timestamp(datetime):
    """A UTC datetime that also holds the nanoseconds below its microsecond and the RFC 3339
    text it is written as; Python's datetime stops at microseconds, Go's times do not."""

    nanosecond: int
    text: str

    @classmethod
    def parse(cls, text: str) -> Timestamp:
        """Read an RFC 3339 time, keeping text exactly as it is for writing back."""
        moment = parse_time(text)
        stamp = cls._of(moment)
        stamp.nanosecond = _sub_microsecond(text)
        stamp.text = text
        return stamp

    @classmethod
    def now_utc(cls) -> Timestamp:
        """The current time to the nanosecond, written as Go writes a UTC time."""
        nanoseconds = time.time_ns()
        seconds, fraction = divmod(nanoseconds, 1_000_000_000)
        moment = datetime.fromtimestamp(seconds, UTC).replace(microsecond=fraction // 1000)
        stamp = cls._of(moment)
        stamp.nanosecond = fraction % 1000
        whole = moment.replace(tzinfo=None, microsecond=0).isoformat()
        digits = f"{fraction:09d}".rstrip("0")
        stamp.text = f"{whole}.{digits}Z" if digits else f"{whole}Z"
        return stamp

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        # copy and pickle rebuild a datetime from its fields, which would lose the text.
        return (Timestamp.parse, (self.text,))

    @classmethod
    def _of(cls, moment: datetime) -> Timestamp:
        return cls(
            moment.year,
            moment.month,
            moment.day,
            moment.hour,
            moment.minute,
            moment.second,
            moment.microsecond,
            tzinfo=UTC,
        )


def _sub_microsecond(text: str) -> int:
    """The seventh to ninth fractional digits of an RFC 3339 time, as a number of nanoseconds."""
    point = text.find(".", text.find("T"))
    if point < 0:
        return 0
    end = point + 1
    while end < len(text) and text[end].isdigit():
        end += 1
    return int(text[point + 1 : end][6:9].ljust(3, "0"))


def format_time(moment: datetime) -> str:
    """RFC 3339 as Go's time.RFC3339Nano writes it: a Timestamp as the text it was read as (or
    made with), any other datetime in UTC with a ``Z`` and the fraction kept only when there is
    one (a naive time is taken to be UTC already)."""
    if isinstance(moment, Timestamp):
        return moment.text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    text = moment.replace(tzinfo=None, microsecond=0).isoformat()
    if moment.microsecond:
        text += "." + f"{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


def parse_time(text: str) -> datetime:
    """An RFC 3339 time with its zone; digits beyond microseconds are dropped."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an RFC 3339 time") from None
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    return moment.astimezone(UTC)


class _FieldError(Exception):
    pass


class _Body:
    """Typed access to one payload object, raising _FieldError naming the field."""

    def __init__(self, data: Mapping[str, Any], kind: RecordKind) -> None:
        self._data = data
        self._kind = kind

    def _get(self, key: str, required: bool) -> Any:
        if key not in self._data:
            if required:
                raise _FieldError(f"the {self._kind.value} payload lacks {key}")
            return None
        return self._data[key]

    def _wrong(self, key: str, what: str) -> _FieldError:
        return _FieldError(f"the {self._kind.value} payload's {key} must be {what}")

    def text(self, key: str, *, required: bool = False) -> str:
        value = self._get(key, required)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self._wrong(key, "a string")
        return value

    def integer(self, key: str, *, required: bool = False) -> int:
        value = self._get(key, required)
        if value is None:
            return 0
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._wrong(key, "an integer")
        return value

    def flag(self, key: str) -> bool:
        value = self._get(key, False)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self._wrong(key, "true or false")
        return value

    def time(self, key: str) -> datetime:
        text = self.text(key, required=True)
        try:
            return Timestamp.parse(text)
        except ValueError as bad:
            raise self._wrong(key, f"an RFC 3339 time ({bad})") from None

    def message(self, key: str, role: Role) -> Message:
        value = self._get(key, True)
        try:
            message = message_from_json(value)
        except CodecError as bad:
            raise _FieldError(
                f"the {self._kind.value} payload's {key} is malformed: {bad}"
            ) from None
        if message.role is not role:
            raise self._wrong(key, f"a {role.value} message")
        return message

    def images(self, key: str) -> tuple[ResultImage, ...]:
        try:
            return images_from_json(self._get(key, False))
        except CodecError as bad:
            raise _FieldError(
                f"the {self._kind.value} payload's {key} are malformed: {bad}"
            ) from None

    def mapping(self, key: str) -> Mapping[str, Any]:
        value = self._get(key, True)
        if not isinstance(value, Mapping):
            raise self._wrong(key, "an object")
        return value


def _omit_empty(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value not in ("", 0, False)}


def _encode_meta(meta: Meta) -> dict[str, Any]:
    return {
        "version": meta.version,
        "run_id": meta.run_id,
        "created": format_time(meta.created),
        "fingerprint": fingerprint_to_json(meta.fingerprint),
        # Go writes prompt even when empty (no omitempty on it).
        "prompt": meta.prompt,
        **_omit_empty(
            {
                "interactive": meta.interactive,
                "conversation_token": meta.conversation_token,
                "caller": meta.caller,
            }
        ),
    }


def _decode_meta(body: _Body) -> Meta:
    try:
        fingerprint = fingerprint_from_json(body.mapping("fingerprint"))
    except JournalError as bad:
        raise _FieldError(str(bad)) from None
    return Meta(
        run_id=body.text("run_id", required=True),
        created=body.time("created"),
        fingerprint=fingerprint,
        prompt=body.text("prompt"),
        interactive=body.flag("interactive"),
        conversation_token=body.text("conversation_token"),
        caller=body.text("caller"),
        version=body.integer("version", required=True),
    )


def _encode_assistant(assistant: Assistant) -> dict[str, Any]:
    data: dict[str, Any] = {
        "iteration": assistant.iteration,
        "message": message_to_json(assistant.message),
    }
    if assistant.stop_reason:
        data["stop_reason"] = assistant.stop_reason
    data["in_tokens"] = assistant.in_tokens
    data["out_tokens"] = assistant.out_tokens
    data.update(
        _omit_empty(
            {
                "cache_read_tokens": assistant.cache_read_tokens,
                "cache_create_tokens": assistant.cache_create_tokens,
                "thinking_tokens": assistant.thinking_tokens,
            }
        )
    )
    return data


def _decode_assistant(body: _Body) -> Assistant:
    return Assistant(
        iteration=body.integer("iteration", required=True),
        message=body.message("message", Role.ASSISTANT),
        in_tokens=body.integer("in_tokens", required=True),
        out_tokens=body.integer("out_tokens", required=True),
        stop_reason=body.text("stop_reason"),
        cache_read_tokens=body.integer("cache_read_tokens"),
        cache_create_tokens=body.integer("cache_create_tokens"),
        thinking_tokens=body.integer("thinking_tokens"),
    )


def _encode_user(user: User) -> dict[str, Any]:
    return {"message": message_to_json(user.message)}


def _decode_user(body: _Body) -> User:
    return User(body.message("message", Role.USER))


def _encode_tool_result(tool_result: ToolResult) -> dict[str, Any]:
    block = tool_result.result
    data: dict[str, Any] = {"tool_use_id": block.tool_use_id, "result": tool_result_to_json(block)}
    if tool_result.remote:
        data["remote"] = True
    return data


def _decode_tool_result(body: _Body) -> ToolResult:
    tool_use_id = body.text("tool_use_id", required=True)
    result = _Body(body.mapping("result"), RecordKind.TOOL_RESULT)
    answered = result.text("tool_use_id") or tool_use_id
    if answered != tool_use_id:
        raise _FieldError(
            f"the tool_result payload answers {tool_use_id} but its result names {answered}"
        )
    block = ToolResultBlock(
        tool_use_id, result.text("content"), result.flag("is_error"), result.images("images")
    )
    return ToolResult(block, remote=body.flag("remote"))


def _encode_deferred(deferred: Deferred) -> dict[str, Any]:
    return {
        "tool_use_id": deferred.tool_use_id,
        "tool_name": deferred.tool_name,
        **_omit_empty({"note": deferred.note, "handle": deferred.handle}),
    }


def _decode_deferred(body: _Body) -> Deferred:
    return Deferred(
        tool_use_id=body.text("tool_use_id", required=True),
        tool_name=body.text("tool_name", required=True),
        note=body.text("note"),
        handle=body.text("handle"),
    )


def _encode_decision(decision: Decision) -> dict[str, Any]:
    return {"tool": decision.tool}


def _decode_decision(body: _Body) -> Decision:
    return Decision(body.text("tool", required=True))


def _encode_call_approval(approval: CallApproval) -> dict[str, Any]:
    return {"tool_use_id": approval.tool_use_id, "tool_name": approval.tool_name}


def _decode_call_approval(body: _Body) -> CallApproval:
    return CallApproval(
        tool_use_id=body.text("tool_use_id", required=True),
        tool_name=body.text("tool_name", required=True),
    )


def _encode_memory_revisions(memory: MemoryRevisions) -> dict[str, Any]:
    return {"revisions": dict(memory.revisions)}


def _decode_memory_revisions(body: _Body) -> MemoryRevisions:
    revisions = body.mapping("revisions")
    for key, revision in revisions.items():
        if not isinstance(revision, int) or isinstance(revision, bool):
            raise _FieldError(
                f"the memory_revisions payload's revision of {key!r} is not an integer"
            )
    return MemoryRevisions(revisions)


def _encode_terminal(terminal: Terminal) -> dict[str, Any]:
    return {"reason": terminal.reason.value, **_omit_empty({"message": terminal.message})}


def _decode_terminal(body: _Body) -> Terminal:
    reason = body.text("reason", required=True)
    try:
        return Terminal(TerminalReason(reason), body.text("message"))
    except ValueError:
        known = ", ".join(member.value for member in TerminalReason)
        raise _FieldError(f"the terminal reason {reason!r} is not one of {known}") from None


def _encode_claim(claim: Claim) -> dict[str, Any]:
    return {"by": claim.by, "claimed": format_time(claim.claimed)}


def _decode_claim(body: _Body) -> Claim:
    return Claim(body.text("by", required=True), body.time("claimed"))


_KIND_OF: dict[type, RecordKind] = {
    Meta: RecordKind.META,
    Assistant: RecordKind.ASSISTANT,
    User: RecordKind.USER,
    ToolResult: RecordKind.TOOL_RESULT,
    Deferred: RecordKind.DEFERRED,
    Decision: RecordKind.DECISION,
    CallApproval: RecordKind.CALL_APPROVAL,
    MemoryRevisions: RecordKind.MEMORY_REVISIONS,
    Terminal: RecordKind.TERMINAL,
    Claim: RecordKind.CLAIM,
}

_ENCODERS: dict[RecordKind, Callable[[Any], dict[str, Any]]] = {
    RecordKind.META: _encode_meta,
    RecordKind.ASSISTANT: _encode_assistant,
    RecordKind.USER: _encode_user,
    RecordKind.TOOL_RESULT: _encode_tool_result,
    RecordKind.DEFERRED: _encode_deferred,
    RecordKind.DECISION: _encode_decision,
    RecordKind.CALL_APPROVAL: _encode_call_approval,
    RecordKind.MEMORY_REVISIONS: _encode_memory_revisions,
    RecordKind.TERMINAL: _encode_terminal,
    RecordKind.CLAIM: _encode_claim,
}

_DECODERS: dict[RecordKind, Callable[[_Body], Payload]] = {
    RecordKind.META: _decode_meta,
    RecordKind.ASSISTANT: _decode_assistant,
    RecordKind.USER: _decode_user,
    RecordKind.TOOL_RESULT: _decode_tool_result,
    RecordKind.DEFERRED: _decode_deferred,
    RecordKind.DECISION: _decode_decision,
    RecordKind.CALL_APPROVAL: _decode_call_approval,
    RecordKind.MEMORY_REVISIONS: _decode_memory_revisions,
    RecordKind.TERMINAL: _decode_terminal,
    RecordKind.CLAIM: _decode_claim,
}

_PAYLOAD_KEYS = frozenset(kind.value for kind in RecordKind)


def _kind_of_protocol(protocol: str) -> RecordKind | None:
    if not protocol.startswith(PROTOCOL_PREFIX):
        return None
    try:
        return RecordKind(protocol.removeprefix(PROTOCOL_PREFIX))
    except ValueError:
        return None
