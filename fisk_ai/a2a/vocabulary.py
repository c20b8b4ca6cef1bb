"""The a2a v1 vocabulary: protocol ids and which way each travels, the closed sets of stop
reasons, error codes and answer kinds, and the constrained strings a header carries.

Stop reasons and error codes are open on the wire: ``OpenStopReason`` and ``OpenErrorCode`` carry
a value this build does not name as a plain string rather than refusing the message.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Annotated

from pydantic import Field, StringConstraints

__all__ = [
    "EVENT_PROTOCOL_PATTERN",
    "EVENT_PROTOCOL_PREFIX",
    "EVENT_TEXT_DELTA",
    "EVENT_THINKING_DELTA",
    "PROTOCOL_NAMESPACE",
    "PROTOCOL_PREFIX",
    "AnswerField",
    "AnswerKind",
    "ConversationToken",
    "Direction",
    "ElicitChoice",
    "ElicitText",
    "ErrorCode",
    "OpenErrorCode",
    "OpenStopReason",
    "ProtocolId",
    "RequestTag",
    "StopReason",
    "Token",
    "ToolUseId",
]

PROTOCOL_NAMESPACE = "io.choria.fisk-ai.v1"
PROTOCOL_PREFIX = PROTOCOL_NAMESPACE + "."
EVENT_PROTOCOL_PREFIX = PROTOCOL_PREFIX + "event."

# Rust regex (pydantic) and Python re (jsonschema) differ on "$" before a trailing newline; the
# model's stricter reading is the one that decides, since these values become subject tokens.
_SUBJECT_SAFE_PATTERN = r"^[a-zA-Z0-9_-]+$"
_STOP_REASON_PATTERN = r"^[a-z][a-z0-9_]*$"
EVENT_PROTOCOL_PATTERN = r"^io\.choria\.fisk-ai\.v1\.event\.[^.]+$"

Token = Annotated[str, StringConstraints(pattern=_SUBJECT_SAFE_PATTERN)]
RequestTag = Annotated[str, StringConstraints(pattern=_SUBJECT_SAFE_PATTERN, max_length=64)]
ConversationToken = Annotated[str, StringConstraints(pattern=_SUBJECT_SAFE_PATTERN, max_length=128)]
ToolUseId = Annotated[str, StringConstraints(max_length=256)]
ElicitText = Annotated[str, StringConstraints(max_length=4096)]


class Direction(enum.Enum):
    """Which way a message travels between the agent answering and the caller asking."""

    TO_AGENT = "to_agent"
    """Requests, cancels and the answers to questions: what a caller sends."""
    TO_CALLER = "to_caller"
    """Acks, events, questions, terminal messages and replies: what an agent sends back."""


EVENT_TEXT_DELTA = EVENT_PROTOCOL_PREFIX + "text_delta"
EVENT_THINKING_DELTA = EVENT_PROTOCOL_PREFIX + "thinking_delta"
"""The pieces of an answer as the model writes it: a fisk-ai addition, outside the v1 set a Go
peer names, so a receiver without them keeps them as events of an unnamed kind (checked by the
framing alone). Sent only to a caller whose request asked for them with ``deltas``."""


class ProtocolId(enum.StrEnum):
    """Every protocol id of v1. The set is closed: an id outside it is refused on arrival, except
    an ``event.<kind>`` this build does not name, which decodes into ``UnknownEvent``."""

    REQUEST_PROMPT = PROTOCOL_PREFIX + "request.prompt"
    REQUEST_RESUME = PROTOCOL_PREFIX + "request.resume"
    REQUEST_ANSWER = PROTOCOL_PREFIX + "request.answer"
    REQUEST_READ = PROTOCOL_PREFIX + "request.read"
    ACK = PROTOCOL_PREFIX + "ack"
    EVENT_THINKING = EVENT_PROTOCOL_PREFIX + "thinking"
    EVENT_TEXT = EVENT_PROTOCOL_PREFIX + "text"
    EVENT_TOOL_CALL = EVENT_PROTOCOL_PREFIX + "tool_call"
    EVENT_TOOL_RESULT = EVENT_PROTOCOL_PREFIX + "tool_result"
    EVENT_AGENT_CALL = EVENT_PROTOCOL_PREFIX + "agent_call"
    EVENT_STATUS = EVENT_PROTOCOL_PREFIX + "status"
    EVENT_WARNING = EVENT_PROTOCOL_PREFIX + "warning"
    EVENT_PROMPT = EVENT_PROTOCOL_PREFIX + "prompt"
    ELICIT_REQUEST_APPROVE = PROTOCOL_PREFIX + "elicit.request.approve"
    ELICIT_REQUEST_CONFIRM = PROTOCOL_PREFIX + "elicit.request.confirm"
    ELICIT_REQUEST_SELECT = PROTOCOL_PREFIX + "elicit.request.select"
    ELICIT_REQUEST_INPUT = PROTOCOL_PREFIX + "elicit.request.input"
    ELICIT_REPLY_APPROVE = PROTOCOL_PREFIX + "elicit.reply.approve"
    ELICIT_REPLY_CONFIRM = PROTOCOL_PREFIX + "elicit.reply.confirm"
    ELICIT_REPLY_SELECT = PROTOCOL_PREFIX + "elicit.reply.select"
    ELICIT_REPLY_INPUT = PROTOCOL_PREFIX + "elicit.reply.input"
    ELICIT_REPLY_NO_OPERATOR = PROTOCOL_PREFIX + "elicit.reply.no_operator"
    ELICIT_WAITING = PROTOCOL_PREFIX + "elicit.waiting"
    CANCEL = PROTOCOL_PREFIX + "cancel"
    RESULT = PROTOCOL_PREFIX + "result"
    ERROR = PROTOCOL_PREFIX + "error"
    TOOL_REQUEST = PROTOCOL_PREFIX + "tool.request"
    TOOL_REPLY = PROTOCOL_PREFIX + "tool.reply"
    DISCOVERY_REQUEST = PROTOCOL_PREFIX + "discovery.request"
    DISCOVERY_REPLY = PROTOCOL_PREFIX + "discovery.reply"

    @property
    def name_in_namespace(self) -> str:
        """The id after the namespace, e.g. ``request.prompt``; also its schema's file stem."""
        return self.value.removeprefix(PROTOCOL_PREFIX)

    @property
    def direction(self) -> Direction:
        return _DIRECTIONS[self]


_DIRECTIONS: Mapping[ProtocolId, Direction] = {
    protocol: (
        Direction.TO_AGENT
        if protocol.name_in_namespace.startswith(("request.", "elicit.reply.", "elicit.waiting"))
        or protocol in (ProtocolId.CANCEL, ProtocolId.TOOL_REQUEST, ProtocolId.DISCOVERY_REQUEST)
        else Direction.TO_CALLER
    )
    for protocol in ProtocolId
}


class StopReason(enum.StrEnum):
    """Why a task ended, as far as this build names it. The field that carries one is open."""

    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    REFUSAL = "refusal"
    CANCELED = "canceled"
    ERROR = "error"
    BUDGET_EXHAUSTED = "budget_exhausted"
    SUSPENDED = "suspended"
    MAX_ITERATIONS = "max_iterations"
    DEFERRED = "deferred"


class ErrorCode(enum.StrEnum):
    """The codes a terminal error or a tool reply carries for a caller to branch on."""

    REJECTED = "rejected"
    CAPACITY = "capacity"
    DUPLICATE_REQUEST = "duplicate_request"
    DRAINING = "draining"
    FAILED = "failed"
    CRASHED = "crashed"
    NOT_STARTED = "not_started"
    DEFERRED = "deferred"
    SUSPENDED = "suspended"
    CANCELED = "canceled"
    UNKNOWN_CONVERSATION = "unknown_conversation"
    CONVERSATION_BUSY = "conversation_busy"
    TURN_NOT_TAKEN = "turn_not_taken"
    BUDGET_EXHAUSTED = "budget_exhausted"
    UNKNOWN_CALL = "unknown_call"
    ALREADY_ANSWERED = "already_answered"
    ANSWER_TOO_LARGE = "answer_too_large"


# left_to_right makes a known value arrive as the enum member rather than as an equal string.
OpenStopReason = Annotated[
    StopReason
    | Annotated[str, StringConstraints(pattern=_STOP_REASON_PATTERN, min_length=1, max_length=64)],
    Field(union_mode="left_to_right"),
]
OpenErrorCode = Annotated[ErrorCode | str, Field(union_mode="left_to_right")]


class ElicitChoice(enum.StrEnum):
    """An operator's answer to an approval question."""

    NO = "no"
    ONCE = "once"
    ALWAYS = "always"


class AnswerKind(enum.StrEnum):
    """The question a late answer is for."""

    APPROVE = "approve"
    CONFIRM = "confirm"
    SELECT = "select"
    INPUT = "input"


class AnswerField(enum.StrEnum):
    """Which field of a late answer holds the decision."""

    CHOICE = "choice"
    CONFIRMED = "confirmed"
    VALUE = "value"
    NO_OPERATOR = "no_operator"
