"""The a2a v1 messages as typed models, one per protocol id, and the framing every message carries.

Every message is one flat JSON object: the framing header (protocol, id, request, conversation,
parent, sequence, time, sender, recipient, must_understand, traceparent) beside the fields of its
kind. The protocol id alone says what kind of message it is, so each id maps to exactly one model.

A field the peer may leave out defaults to its zero value and is left out again when written, as
Go's omitempty does; a field whose absence means something different from its zero value (a
budget, a conversation token, a question's wait) is None when absent. Fields a receiver does not
know are dropped when a message is read. Stop reasons and error codes are open: a value this build
does not name is carried as a plain string.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypedDict, TypeVar, cast

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    PlainSerializer,
    StringConstraints,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

from fisk_ai.a2a.vocabulary import (
    EVENT_PROTOCOL_PATTERN,
    EVENT_PROTOCOL_PREFIX,
    AnswerField,
    AnswerKind,
    ConversationToken,
    ElicitChoice,
    ElicitText,
    OpenErrorCode,
    OpenStopReason,
    ProtocolId,
    RequestTag,
    Token,
    ToolUseId,
)
from fisk_ai.llm.types import Usage
from fisk_ai.tools.base import ExecRecord
from fisk_ai.util import jsonx
from fisk_ai.util.ids import new_ksuid

__all__ = [
    "Ack",
    "AgentCallBody",
    "Answer",
    "Budget",
    "Cancel",
    "DiscoveryReply",
    "DiscoveryRequest",
    "ElicitReplyApprove",
    "ElicitReplyConfirm",
    "ElicitReplyInput",
    "ElicitReplyNoOperator",
    "ElicitReplySelect",
    "ElicitRequestApprove",
    "ElicitRequestConfirm",
    "ElicitRequestInput",
    "ElicitRequestSelect",
    "ElicitWaiting",
    "EventAgentCall",
    "EventMessage",
    "EventPrompt",
    "EventStatus",
    "EventText",
    "EventThinking",
    "EventToolCall",
    "EventToolResult",
    "EventWarning",
    "ExecResult",
    "Header",
    "Identity",
    "Message",
    "PromptBody",
    "ReplyHeader",
    "RequestAnswer",
    "RequestPrompt",
    "RequestRead",
    "RequestResume",
    "StatusBody",
    "TerminalError",
    "TerminalResult",
    "TextBody",
    "ThinkingBody",
    "ToolBehavior",
    "ToolCallBody",
    "ToolDescriptor",
    "ToolReply",
    "ToolRequest",
    "ToolResultBody",
    "UnknownEvent",
    "WarningBody",
    "WireUsage",
    "message_type",
    "new_request",
    "reply_header",
    "reply_to",
]

_FIELDS_FOR_KIND: Mapping[AnswerKind, frozenset[AnswerField]] = {
    AnswerKind.APPROVE: frozenset({AnswerField.CHOICE, AnswerField.NO_OPERATOR}),
    AnswerKind.CONFIRM: frozenset({AnswerField.CONFIRMED, AnswerField.NO_OPERATOR}),
    AnswerKind.SELECT: frozenset({AnswerField.VALUE, AnswerField.NO_OPERATOR}),
    AnswerKind.INPUT: frozenset({AnswerField.VALUE, AnswerField.NO_OPERATOR}),
}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _encodable(cls, data: Any) -> Any:
        # A lone surrogate (model text can hold one) has no UTF-8 form and pydantic refuses it;
        # a message carries U+FFFD in its place, as a Go peer reads one.
        if isinstance(data, dict) and jsonx.has_lone_surrogate(data):
            return jsonx.replace_lone_surrogates(data)
        return data


class Identity(_Model):
    """Who sent or is to receive a message: an agent's identity, and optionally which instance."""

    name: Token
    instance: Token | None = None


class WireUsage(_Model):
    """What a task consumed as the wire counts it: ``input_tokens`` includes both cache tiers,
    where the neutral ``Usage`` counts uncached input alone."""

    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    cache_read_tokens: NonNegativeInt = 0
    cache_create_tokens: NonNegativeInt = 0
    thinking_tokens: NonNegativeInt = 0
    llm_calls: NonNegativeInt = 0
    tool_calls: NonNegativeInt = 0
    remote_tool_calls: NonNegativeInt = 0
    """An addition of ours, as ``argv`` is on a tool call: a Go peer ignores it."""

    @classmethod
    def from_usage(
        cls, usage: Usage, *, llm_calls: int = 0, tool_calls: int = 0, remote_tool_calls: int = 0
    ) -> WireUsage:
        return cls(
            input_tokens=usage.input_tokens + usage.cache_read_tokens + usage.cache_create_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_create_tokens=usage.cache_create_tokens,
            thinking_tokens=usage.thinking_tokens,
            llm_calls=llm_calls,
            tool_calls=tool_calls,
            remote_tool_calls=remote_tool_calls,
        )

    def to_usage(self) -> Usage:
        # A peer may report cache tiers larger than its own input total; never go negative.
        uncached = self.input_tokens - self.cache_read_tokens - self.cache_create_tokens
        return Usage(
            input_tokens=max(uncached, 0),
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_tokens,
            cache_create_tokens=self.cache_create_tokens,
            thinking_tokens=self.thinking_tokens,
        )


class Budget(_Model):
    """Limits a caller asks for. They can only lower the agent's own; ``call_timeout`` is a Go
    duration string, left for the agent to parse against its configuration."""

    max_tokens: NonNegativeInt | None = None
    max_iterations: NonNegativeInt | None = None
    call_timeout: str | None = None


class ExecResult(_Model):
    """The command a tool call ran, when it ran one."""

    command: str = ""
    exit_code: int = 0
    truncated: bool = False

    @classmethod
    def from_record(cls, record: ExecRecord) -> ExecResult:
        return cls(command=record.command, exit_code=record.exit_code, truncated=record.truncated)

    def to_record(self) -> ExecRecord:
        return ExecRecord(self.command, self.exit_code, self.truncated)


class Answer(_Model):
    """An operator's answer to a question whose run has ended, carried inside a request.

    ``answer`` names the field holding the decision and ``kind`` the question it answers; an
    answer whose field does not fit its kind, or is missing, is refused.
    """

    tool_use_id: ToolUseId
    kind: AnswerKind
    answer: AnswerField
    choice: ElicitChoice | None = None
    confirmed: bool | None = None
    value: ElicitText | None = None

    @model_validator(mode="after")
    def _fits_its_kind(self) -> Answer:
        if self.answer not in _FIELDS_FOR_KIND[self.kind]:
            raise ValueError(f"{self.kind} questions are not answered with {self.answer}")
        if self.answer is not AnswerField.NO_OPERATOR and getattr(self, self.answer) is None:
            raise ValueError(f"the answer names {self.answer} but carries no {self.answer} field")
        return self


class ToolBehavior(_Model):
    """Hints a serving agent gives about what calling one of its tools does; None asserts
    nothing."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None


class ToolDescriptor(_Model):
    """A tool on an agent's card."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] | None = None
    behavior: ToolBehavior | None = None


class WireTime(datetime):
    """A message's time as a datetime that remembers the text it was read from. A Go peer writes
    nanoseconds (``2026-08-16T11:00:00.123456789Z``) and a datetime holds microseconds, so a
    message read and written again keeps the peer's text rather than losing three digits."""

    wire: str


_FRACTION = re.compile(r"(\.\d{6})\d+", re.ASCII)


def _wire_time(value: Any, handler: ValidatorFunctionWrapHandler) -> datetime:
    if not isinstance(value, str):
        return cast(datetime, handler(value))
    # The digits past microseconds are dropped for the datetime and kept in the text.
    parsed = cast(datetime, handler(_FRACTION.sub(r"\1", value, count=1)))
    instant = WireTime(
        parsed.year,
        parsed.month,
        parsed.day,
        parsed.hour,
        parsed.minute,
        parsed.second,
        parsed.microsecond,
        parsed.tzinfo,
    )
    instant.wire = value
    return instant


def _written_time(value: datetime) -> str:
    if isinstance(value, WireTime):
        return value.wire
    return value.isoformat().replace("+00:00", "Z")


Time = Annotated[
    AwareDatetime,
    WrapValidator(_wire_time),
    PlainSerializer(_written_time, return_type=str, when_used="json"),
]


class Header(_Model):
    """The framing every message carries. ``request`` names the turn and becomes a subject token,
    hence its character set and length; ``sequence`` orders a reply set."""

    protocol: str
    id: Token
    request: RequestTag
    conversation: Token
    parent: str | None = None
    sequence: NonNegativeInt
    time: Time
    sender: Identity
    recipient: Identity | None = None
    must_understand: bool = False
    traceparent: str | None = None


class RequestPrompt(Header):
    """Run a prompt: a new conversation, or with ``conversation_token`` its next turn."""

    protocol: Literal[ProtocolId.REQUEST_PROMPT] = ProtocolId.REQUEST_PROMPT
    prompt: Annotated[str, StringConstraints(min_length=1)]
    context: str = ""
    tool_hints: tuple[str, ...] = ()
    budget: Budget | None = None
    stream: bool = True
    deltas: bool = False
    """Asks for the pieces of each answer as it is written (``event.text_delta`` and
    ``event.thinking_delta``), a fisk-ai addition a Go caller never sends; left out when false."""
    conversation_token: ConversationToken | None = None
    replay: Annotated[int, Field(ge=1)] | None = None
    force: bool = False


class RequestResume(Header):
    """Continue a conversation's run that stopped part way."""

    protocol: Literal[ProtocolId.REQUEST_RESUME] = ProtocolId.REQUEST_RESUME
    conversation_token: ConversationToken
    budget: Budget | None = None
    stream: bool = True
    deltas: bool = False
    """Asks for the pieces of each answer as it is written (``event.text_delta`` and
    ``event.thinking_delta``), a fisk-ai addition a Go caller never sends; left out when false."""
    force: bool = False


class RequestAnswer(Header):
    """Answer a question the conversation still waits on after its run gave up asking."""

    protocol: Literal[ProtocolId.REQUEST_ANSWER] = ProtocolId.REQUEST_ANSWER
    conversation_token: ConversationToken
    answer: Answer
    budget: Budget | None = None
    stream: bool = True
    deltas: bool = False
    """Asks for the pieces of each answer as it is written (``event.text_delta`` and
    ``event.thinking_delta``), a fisk-ai addition a Go caller never sends; left out when false."""
    replay: Annotated[int, Field(ge=1)] | None = None
    force: bool = False


class RequestRead(Header):
    """Read back the last ``replay`` blocks of a stored conversation."""

    protocol: Literal[ProtocolId.REQUEST_READ] = ProtocolId.REQUEST_READ
    conversation_token: ConversationToken
    replay: Annotated[int, Field(ge=1)]


class Ack(Header):
    """The first message of a reply set, accepting the request or refusing it with a reason."""

    protocol: Literal[ProtocolId.ACK] = ProtocolId.ACK
    accepted: bool
    reason: str = ""
    conversation_token: ConversationToken | None = None
    max_tokens: NonNegativeInt = 0


class ThinkingBody(_Model):
    text: str
    signature: str = ""
    provider: str = ""


class TextBody(_Model):
    """Model prose; ``final`` marks the answer that ended the run."""

    text: str
    final: bool = False


class ToolCallBody(_Model):
    """A tool call. ``argv`` is this implementation's addition: the argument vector a command
    tool runs after the application path, so a remote surface can show the command line. A Go
    peer drops it as an unknown property."""

    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    argv: tuple[str, ...] = ()


class ToolResultBody(_Model):
    call_id: str
    is_error: bool = False
    output: str = ""
    exec: ExecResult | None = None
    # The tool was stopped at its time limit: an addition of ours, as argv is on tool_call. A
    # Go peer drops it, and it is left out when false, so a Go caller reads the same bytes.
    timed_out: bool = False


class AgentCallBody(_Model):
    """A call to another agent; ``task`` is the request id of the task it started."""

    id: str
    name: str
    task: str


class StatusBody(_Model):
    iteration: NonNegativeInt = 0
    phase: str = ""
    usage: WireUsage | None = None
    count: NonNegativeInt = 0
    truncated: bool = False
    # On a retrying status (a fisk-ai addition, as argv is on tool_call; a Go peer drops them):
    # the attempt about to be made, of how many, after how long.
    attempt: NonNegativeInt = 0
    attempts: NonNegativeInt = 0
    wait_ms: NonNegativeInt = 0


class WarningBody(_Model):
    kind: Annotated[str, StringConstraints(min_length=1)]
    name: str = ""
    count: NonNegativeInt = 0
    params: tuple[str, ...] = ()
    error: str = ""


class PromptBody(_Model):
    text: str


class EventThinking(Header):
    protocol: Literal[ProtocolId.EVENT_THINKING] = ProtocolId.EVENT_THINKING
    block: ThinkingBody


class EventText(Header):
    protocol: Literal[ProtocolId.EVENT_TEXT] = ProtocolId.EVENT_TEXT
    block: TextBody


class EventToolCall(Header):
    protocol: Literal[ProtocolId.EVENT_TOOL_CALL] = ProtocolId.EVENT_TOOL_CALL
    block: ToolCallBody


class EventToolResult(Header):
    protocol: Literal[ProtocolId.EVENT_TOOL_RESULT] = ProtocolId.EVENT_TOOL_RESULT
    block: ToolResultBody


class EventAgentCall(Header):
    protocol: Literal[ProtocolId.EVENT_AGENT_CALL] = ProtocolId.EVENT_AGENT_CALL
    block: AgentCallBody


class EventStatus(Header):
    protocol: Literal[ProtocolId.EVENT_STATUS] = ProtocolId.EVENT_STATUS
    block: StatusBody


class EventWarning(Header):
    protocol: Literal[ProtocolId.EVENT_WARNING] = ProtocolId.EVENT_WARNING
    block: WarningBody


class EventPrompt(Header):
    protocol: Literal[ProtocolId.EVENT_PROMPT] = ProtocolId.EVENT_PROMPT
    block: PromptBody


class UnknownEvent(Header):
    """An event of a kind this build does not name. ``block`` is what could be read of it and
    ``raw`` the peer's message exactly as it arrived, for a surface that shows what it can."""

    protocol: Annotated[str, StringConstraints(pattern=EVENT_PROTOCOL_PATTERN)]
    block: dict[str, Any]
    raw: bytes = Field(default=b"", exclude=True, repr=False)

    @property
    def kind(self) -> str:
        return self.protocol.removeprefix(EVENT_PROTOCOL_PREFIX)

    @model_validator(mode="after")
    def _is_not_a_known_kind(self) -> UnknownEvent:
        if self.protocol in _KNOWN_PROTOCOLS:
            raise ValueError(f"{self.protocol} is a known event kind, not an unknown one")
        return self


class ElicitRequestApprove(Header):
    """Asks whether a confirmation-gated command may run. ``argv`` is this implementation's
    addition, as on a tool call: the argument vector the command runs after the application
    path, so the asked can show each argument quoted. A Go peer neither sends nor reads it."""

    protocol: Literal[ProtocolId.ELICIT_REQUEST_APPROVE] = ProtocolId.ELICIT_REQUEST_APPROVE
    question_id: Token
    tool_use_id: ToolUseId | None = None
    command: str
    display: str
    tag: str = ""
    wait_ms: NonNegativeInt | None = None
    argv: tuple[str, ...] = ()


class ElicitRequestConfirm(Header):
    protocol: Literal[ProtocolId.ELICIT_REQUEST_CONFIRM] = ProtocolId.ELICIT_REQUEST_CONFIRM
    question_id: Token
    tool_use_id: ToolUseId | None = None
    question: str
    wait_ms: NonNegativeInt | None = None


class ElicitRequestSelect(Header):
    protocol: Literal[ProtocolId.ELICIT_REQUEST_SELECT] = ProtocolId.ELICIT_REQUEST_SELECT
    question_id: Token
    tool_use_id: ToolUseId | None = None
    question: str
    options: tuple[str, ...]
    wait_ms: NonNegativeInt | None = None


class ElicitRequestInput(Header):
    """Asks for free text; ``default`` is the value to pre-fill, None when nothing is."""

    protocol: Literal[ProtocolId.ELICIT_REQUEST_INPUT] = ProtocolId.ELICIT_REQUEST_INPUT
    question_id: Token
    tool_use_id: ToolUseId | None = None
    question: str
    default: str | None = None
    wait_ms: NonNegativeInt | None = None


class ElicitReplyApprove(Header):
    """The operator's choice. ``reason`` is this implementation's addition: with ``no``, the
    operator's sentence for the model. A Go peer neither sends nor reads it, so its plain no is
    a decline without one."""

    protocol: Literal[ProtocolId.ELICIT_REPLY_APPROVE] = ProtocolId.ELICIT_REPLY_APPROVE
    question_id: Token
    choice: ElicitChoice
    reason: ElicitText = ""


class ElicitReplyConfirm(Header):
    protocol: Literal[ProtocolId.ELICIT_REPLY_CONFIRM] = ProtocolId.ELICIT_REPLY_CONFIRM
    question_id: Token
    confirmed: bool


class ElicitReplySelect(Header):
    """A position in the options the question sent."""

    protocol: Literal[ProtocolId.ELICIT_REPLY_SELECT] = ProtocolId.ELICIT_REPLY_SELECT
    question_id: Token
    index: NonNegativeInt


class ElicitReplyInput(Header):
    protocol: Literal[ProtocolId.ELICIT_REPLY_INPUT] = ProtocolId.ELICIT_REPLY_INPUT
    question_id: Token
    value: ElicitText


class ElicitReplyNoOperator(Header):
    """Nobody is there to answer; the question fails closed."""

    protocol: Literal[ProtocolId.ELICIT_REPLY_NO_OPERATOR] = ProtocolId.ELICIT_REPLY_NO_OPERATOR
    question_id: Token


class ElicitWaiting(Header):
    """Somebody is looking at the question: restart its window."""

    protocol: Literal[ProtocolId.ELICIT_WAITING] = ProtocolId.ELICIT_WAITING
    question_id: Token


class Cancel(Header):
    protocol: Literal[ProtocolId.CANCEL] = ProtocolId.CANCEL
    reason: str = ""


class TerminalResult(Header):
    """The answer that ends a reply set. ``usage`` counts the whole conversation."""

    protocol: Literal[ProtocolId.RESULT] = ProtocolId.RESULT
    stop_reason: OpenStopReason
    text: str = ""
    usage: WireUsage | None = None
    trace_id: str = ""
    content_exported: bool = False


class TerminalError(Header):
    """The failure that ends a reply set, with a ``code`` to branch on."""

    protocol: Literal[ProtocolId.ERROR] = ProtocolId.ERROR
    error: str
    code: OpenErrorCode | None = None
    stop_reason: OpenStopReason | None = None
    usage: WireUsage | None = None
    trace_id: str = ""
    content_exported: bool = False


class ToolRequest(Header):
    protocol: Literal[ProtocolId.TOOL_REQUEST] = ProtocolId.TOOL_REQUEST
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ToolReply(Header):
    """A served tool call's answer. A failed or refused call is reported here with
    ``is_error``, never as a transport error; ``code`` says why a call did not run."""

    protocol: Literal[ProtocolId.TOOL_REPLY] = ProtocolId.TOOL_REPLY
    is_error: bool = False
    code: OpenErrorCode | None = None
    output: str = ""
    exec: ExecResult | None = None


class DiscoveryRequest(Header):
    protocol: Literal[ProtocolId.DISCOVERY_REQUEST] = ProtocolId.DISCOVERY_REQUEST


class DiscoveryReply(Header):
    """An agent's card."""

    protocol: Literal[ProtocolId.DISCOVERY_REPLY] = ProtocolId.DISCOVERY_REPLY
    name: str
    version: str
    description: str = ""
    model: Annotated[str, StringConstraints(max_length=128)] = ""
    protocols: tuple[str, ...] = ()
    tools: tuple[ToolDescriptor, ...] = ()
    telemetry: bool = False
    telemetry_content: bool = False


EventMessage = (
    EventThinking
    | EventText
    | EventToolCall
    | EventToolResult
    | EventAgentCall
    | EventStatus
    | EventWarning
    | EventPrompt
)

Message = (
    RequestPrompt
    | RequestResume
    | RequestAnswer
    | RequestRead
    | Ack
    | EventMessage
    | UnknownEvent
    | ElicitRequestApprove
    | ElicitRequestConfirm
    | ElicitRequestSelect
    | ElicitRequestInput
    | ElicitReplyApprove
    | ElicitReplyConfirm
    | ElicitReplySelect
    | ElicitReplyInput
    | ElicitReplyNoOperator
    | ElicitWaiting
    | Cancel
    | TerminalResult
    | TerminalError
    | ToolRequest
    | ToolReply
    | DiscoveryRequest
    | DiscoveryReply
)

_MESSAGE_TYPES: tuple[type[Header], ...] = (
    RequestPrompt,
    RequestResume,
    RequestAnswer,
    RequestRead,
    Ack,
    EventThinking,
    EventText,
    EventToolCall,
    EventToolResult,
    EventAgentCall,
    EventStatus,
    EventWarning,
    EventPrompt,
    ElicitRequestApprove,
    ElicitRequestConfirm,
    ElicitRequestSelect,
    ElicitRequestInput,
    ElicitReplyApprove,
    ElicitReplyConfirm,
    ElicitReplySelect,
    ElicitReplyInput,
    ElicitReplyNoOperator,
    ElicitWaiting,
    Cancel,
    TerminalResult,
    TerminalError,
    ToolRequest,
    ToolReply,
    DiscoveryRequest,
    DiscoveryReply,
)

_TYPE_FOR_PROTOCOL: Mapping[ProtocolId, type[Header]] = {
    ProtocolId(cls.model_fields["protocol"].default): cls for cls in _MESSAGE_TYPES
}
_KNOWN_PROTOCOLS = frozenset(protocol.value for protocol in ProtocolId)


def message_type(protocol: ProtocolId) -> type[Header]:
    """The model of the messages a protocol id names."""
    return _TYPE_FOR_PROTOCOL[protocol]


M = TypeVar("M", bound=Header)


def new_request(
    cls: type[M],
    *,
    sender: Identity,
    recipient: Identity | None = None,
    request: str | None = None,
    conversation: str | None = None,
    **fields: Any,
) -> M:
    """A message opening an exchange. Its id is a fresh KSUID, ``request`` and ``conversation``
    default to it (a caller that must address the turn before sending picks ``request``; a
    follow-up turn passes the conversation it continues), sequence is 0 and time is now."""
    message_id = new_ksuid()
    request = request or message_id
    header: dict[str, Any] = {
        "id": message_id,
        "request": request,
        "conversation": conversation or request,
        "sequence": 0,
        "time": datetime.now(UTC),
        "sender": sender,
        "recipient": recipient,
    }
    return cls.model_validate({**fields, **header})


class ReplyHeader(TypedDict):
    """The framing of a message answering a request, to build a typed reply from:
    ``TerminalResult(**header, stop_reason=...)``."""

    id: str
    request: str
    conversation: str
    sequence: int
    time: datetime
    sender: Identity
    recipient: Identity | None


def reply_header(request: Header, *, sender: Identity, sequence: int = 0) -> ReplyHeader:
    """The framing answering ``request``: a fresh id, its request and conversation echoed, and
    addressed back to whoever sent it."""
    return ReplyHeader(
        id=new_ksuid(),
        request=request.request,
        conversation=request.conversation,
        sequence=sequence,
        time=datetime.now(UTC),
        sender=sender,
        recipient=request.sender,
    )


def reply_to(
    request: Header,
    cls: type[M],
    *,
    sender: Identity,
    sequence: int = 0,
    **fields: Any,
) -> M:
    """A message of kind ``cls`` answering ``request`` (see ``reply_header``)."""
    header = reply_header(request, sender=sender, sequence=sequence)
    return cls.model_validate({**fields, **header})
