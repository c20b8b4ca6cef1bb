"""The handle every caller holds: spans for a run, a model call and a tool call, and delivery.

A disabled run holds ``DISABLED``, whose calls do nothing, so call sites never branch. Nothing
here imports OpenTelemetry; ``start`` loads the SDK only when export is on, so a headless command
that does not export never pays for it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol
from urllib.parse import urlsplit

from fisk_ai.errors import FiskError
from fisk_ai.util.redact import redact_url

__all__ = [
    "DEFAULT_ENDPOINT",
    "DISABLED",
    "TOOL_FAILED",
    "Delivery",
    "ErrorClass",
    "ServedCall",
    "ServedToolOutcome",
    "Span",
    "Telemetry",
    "TelemetryError",
    "TelemetrySettings",
    "ToolRefusal",
    "TurnTrace",
    "current",
    "current_traceparent",
    "environment_traceparent",
    "export_on",
    "exporter_note",
    "exporter_variables_set",
    "off_switch",
    "parsed_traceparent",
    "start",
    "turn_trace",
]

DEFAULT_ENDPOINT = "http://localhost:4318"
DEFAULT_SERVICE_NAME = "fisk-ai"
# The carrier the OpenTelemetry specification names for a process started inside a trace.
TRACEPARENT_VARIABLE = "TRACEPARENT"
_TRACEPARENT = re.compile(r"[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}")
# An explicit off variable wins over everything, as the precedence chain says.
OFF_VARIABLE = "FISK_TELEMETRY_DISABLED"
SDK_DISABLED_VARIABLE = "OTEL_SDK_DISABLED"


class TelemetryError(FiskError):
    """Telemetry could not start as configured; the message names the key to change."""


@dataclass(frozen=True)
class ErrorClass:
    """A failure's class on a span: a closed value, never an exception's text or stack."""

    value: str


GENERIC_ERROR = ErrorClass("_OTHER")
TOOL_FAILED = ErrorClass("tool_error")
"""A tool call whose caller was told it failed."""


class ToolRefusal(StrEnum):
    """Why a tool call was answered without running, as ``fisk.tool.outcome`` names it: a
    PreToolUse hook denied it, its arguments failed validation, or the confirm gate declined."""

    POLICY_DENIED = "policy_denied"
    MISSING_ARGUMENTS = "missing_arguments"
    CONFIRM_DENIED = "confirm_denied"


class ServedToolOutcome(StrEnum):
    """How a tool call this agent served for a peer over a2a ended, as ``fisk.tool.outcome``
    names it: the tool ran and answered, or ran and failed, or the call was refused before
    anything ran because no served tool has the name, every slot was busy, or the agent was
    draining."""

    EXECUTED = "executed"
    ERROR = "error"
    UNKNOWN_TOOL = "unknown_tool"
    CAPACITY = "capacity"
    DRAINING = "draining"


@dataclass(frozen=True)
class ServedCall:
    """One tool call agent ``agent`` (this one) serves for a peer over a2a.

    ``tool`` is the name the peer asked for; ``known`` says a served tool has it, else the name
    is the peer's unvalidated input and reaches an attribute only. ``request`` is the request's
    correlation tag. ``caller`` is what the transport vouches for about who called, and
    ``caller_verified`` whether it vouches for anything; ``sender`` is the identity the message
    claims, which proves nothing. ``traceparent`` is the caller's, from the request.
    """

    agent: str
    tool: str
    known: bool = True
    request: str = ""
    caller: str = ""
    caller_verified: bool = False
    sender: str = ""
    traceparent: str = ""


@dataclass(frozen=True)
class TelemetrySettings:
    """Primitives only. ``sample_ratio`` is None when unset (1.0), and 0 samples nothing.
    ``disabled_by`` names the switch that turned export off (``--no-telemetry``), if any."""

    enabled: bool = False
    endpoint: str = ""
    service_name: str = ""
    sample_ratio: float | None = None
    no_metrics: bool = False
    capture: bool = False
    capture_max_bytes: int = 0
    capture_full_messages: bool = False
    """telemetry.capture.messages: full puts every message of a model request on its span,
    delta (the default) only those the previous call did not carry."""
    disabled_by: str = ""


@dataclass(frozen=True)
class Delivery:
    """Spans handed to the exporter against spans the collector accepted."""

    attempted: int = 0
    delivered: int = 0
    first_error: str = ""

    def summary(self) -> str:
        """``3 of 5 spans delivered``, with the first error when some were lost."""
        text = f"{self.delivered} of {self.attempted} spans delivered"
        if self.first_error and self.delivered < self.attempted:
            text += f" ({self.first_error})"
        return text


@dataclass
class TurnTrace:
    """What one served turn recorded, for its terminal message: the trace its root span went to
    (empty when nothing is exported or the trace was not sampled) and whether the conversation
    itself rode on that trace's spans."""

    trace_id: str = ""
    content_exported: bool = False
    traceparent: str = ""
    """The root span's own ``traceparent``, for messages sent after the run ended."""


# Set by whoever serves a turn around the run, read by the live handle when the turn's root span
# starts; a mutable record, so a task the run starts still writes to the server's copy.
_TURN_TRACE: ContextVar[TurnTrace | None] = ContextVar("fisk_ai_turn_trace", default=None)


@contextlib.contextmanager
def turn_trace(record: TurnTrace | None = None) -> Iterator[TurnTrace]:
    """Record the trace of the run started inside the block into ``record`` (a fresh one when
    not given); read it after the block."""
    record = record if record is not None else TurnTrace()
    token = _TURN_TRACE.set(record)
    try:
        yield record
    finally:
        _TURN_TRACE.reset(token)


def recording_turn() -> TurnTrace | None:
    """The record a server opened around the current turn, if any."""
    return _TURN_TRACE.get()


def current_traceparent() -> str:
    """The W3C ``traceparent`` of the span current in this context, for a message this process
    sends; empty when no export started (OpenTelemetry is then not even loaded)."""
    live = sys.modules.get("fisk_ai.telemetry.live")
    if live is None:
        return ""
    text: str = live.current_traceparent()
    return text


def parsed_traceparent(text: str) -> str:
    """``text`` as a W3C ``traceparent`` a caller sent (an HTTP header, an environment
    variable), normalized; empty when it is not one."""
    normalized = text.strip().lower()
    return normalized if _TRACEPARENT.fullmatch(normalized) else ""


def environment_traceparent() -> str:
    """The ``TRACEPARENT`` variable a process started inside a trace was given (the
    specification's environment carrier), for a command that exports nothing itself; empty when
    unset or malformed."""
    return parsed_traceparent(os.environ.get(TRACEPARENT_VARIABLE, ""))


class Span(Protocol):
    def set(self, key: str, value: str | int | float | bool | tuple[str, ...]) -> None: ...

    def usage(
        self,
        input_tokens: int,
        output_tokens: int,
        *,
        cache_read_tokens: int = 0,
        cache_creation_tokens: int = 0,
        reasoning_tokens: int = 0,
    ) -> None:
        """A model call's tokens as the provider counts them: ``input_tokens`` is the input
        billed at the uncached rate, the two cache tiers apart, and ``reasoning_tokens`` the
        part of ``output_tokens`` spent thinking. The span reports the conventions' total
        input (all three tiers) beside the tiers."""

    def finish_reasons(self, *reasons: str) -> None: ...

    def time_to_first_chunk(self, seconds: float) -> None:
        """How long a streamed model call took to its first piece of the answer."""

    def conversation(self, session_id: str) -> None:
        """The session a model call belongs to, as ``gen_ai.conversation.id``."""

    def response(self, response_id: str, model: str) -> None:
        """A model call's reply as the provider names it: its id and the model that answered
        (the snapshot behind an alias). An empty value is left off."""

    def content(self, key: str, build: Callable[[], str], *, from_index: int | None = None) -> None:
        """Record conversation content, calling ``build`` only when capture is on. For
        ``gen_ai.input.messages`` and ``gen_ai.output.messages`` ``build`` returns the messages
        in the session journal's JSON encoding; the span carries them in the GenAI
        conventions' parts shape. Any other key's value is JSON, or text sent as a JSON
        string. A tool span whose ``gen_ai.tool.call.result`` is offered was answered.
        ``from_index`` is where in the conversation the captured messages begin, recorded
        beside them as ``fisk.content.from_index``."""

    def refused(self, refusal: ToolRefusal) -> None:
        """The tool call was answered without running, for this reason."""

    def rewritten(self, name: str, kind: str) -> None:
        """A PreToolUse hook changed the tool call's tool or arguments; ``name`` and ``kind``
        are the tool that runs instead, which the span and metrics then report."""

    def confirm_waited(self, seconds: float) -> None:
        """How long the tool call waited on the operator's approval."""

    def exit_code(self, code: int | None) -> None:
        """The exit status of the command the tool call ran, zero included; None for a tool
        that ran no command, which then reports none rather than a success."""

    def terminal_reason(self, reason: str) -> None:
        """How the run a root span covers ended: a journal terminal reason (``completed``,
        ``suspended``, ``error``, ``budget``, ``max_iterations``) or ``setup_failed``."""

    def served(self, outcome: ServedToolOutcome) -> None:
        """How the tool call a served span covers ended."""

    def fail(self, error: ErrorClass) -> None: ...


class _NoSpan:
    def set(self, key: str, value: str | int | float | bool | tuple[str, ...]) -> None:
        pass

    def usage(
        self,
        input_tokens: int,
        output_tokens: int,
        *,
        cache_read_tokens: int = 0,
        cache_creation_tokens: int = 0,
        reasoning_tokens: int = 0,
    ) -> None:
        pass

    def finish_reasons(self, *reasons: str) -> None:
        pass

    def time_to_first_chunk(self, seconds: float) -> None:
        pass

    def conversation(self, session_id: str) -> None:
        pass

    def response(self, response_id: str, model: str) -> None:
        pass

    def content(self, key: str, build: Callable[[], str], *, from_index: int | None = None) -> None:
        pass

    def refused(self, refusal: ToolRefusal) -> None:
        pass

    def rewritten(self, name: str, kind: str) -> None:
        pass

    def confirm_waited(self, seconds: float) -> None:
        pass

    def exit_code(self, code: int | None) -> None:
        pass

    def terminal_reason(self, reason: str) -> None:
        pass

    def served(self, outcome: ServedToolOutcome) -> None:
        pass

    def fail(self, error: ErrorClass) -> None:
        pass


NO_SPAN = _NoSpan()


class Telemetry:
    """The disabled handle; ``start`` returns a live subclass when export is on."""

    enabled = False
    content_exported = False
    full_messages = False

    def startup(self, agent: str) -> None:
        """Open the span of this process's startup, from the moment the process started; it
        ends at ``ready``, at the latest when the first turn starts. One still open at
        ``shutdown`` ends as failed (``error.type=setup_failed``): the process stopped before
        it was ready."""

    def memory_store(self, backend: str, location: str = "") -> None:
        """The memory store every run of this process shares: its registered backend name and
        its operator-configured location (never a path) go on the startup span and on the span
        of each memory tool call. Span attributes only, never metric labels."""

    def ready(self, *, tools_by_kind: Mapping[str, int] | None = None) -> None:
        """The process can take its first prompt: end the startup span, with the tool set's
        size per kind (``application``, ``builtin``, ``remote``, ``mcp``, ``custom``)."""

    def run(
        self,
        agent: str,
        *,
        traceparent: str = "",
        interactive: bool = False,
        resumed: bool = False,
    ) -> AbstractContextManager[Span]:
        """The root span of one turn, continuing ``traceparent`` when a caller sent one.
        ``resumed`` says the turn continues a stored conversation in a new process."""
        return nullcontext(NO_SPAN)

    def model_call(
        self,
        provider: str,
        model: str,
        *,
        system: Sequence[str] = (),
        iteration: int = 0,
        messages: int = 0,
        tools: int = 0,
        max_tokens: int = 0,
    ) -> AbstractContextManager[Span]:
        """One model call: the loop's ``iteration`` (it goes on counting across a resume), how
        many ``messages`` and ``tools`` the request carries and its output cap. ``system`` is
        the request's system prompt segments, captured once per turn as
        ``gen_ai.system_instructions``."""
        return nullcontext(NO_SPAN)

    def tool_call(
        self,
        name: str,
        *,
        call_id: str = "",
        kind: str = "",
        arguments: str = "",
        confirm_gated: bool = False,
        resumed: bool = False,
    ) -> AbstractContextManager[Span]:
        """One tool call, covering every exit. ``kind`` is where the tool comes from
        (``tools.Kind``'s value; ``unknown`` when no tool has the name, which then stays off
        the span's name and every metric); ``arguments`` the model's JSON, of which only the
        key names are recorded unless capture is on. ``confirm_gated`` says the call needs the
        operator's approval; ``resumed`` that it belongs to a batch a resume is finishing."""
        return nullcontext(NO_SPAN)

    def mcp_tool_call(
        self, tool: str, *, server: str = "", served: bool = False, traceparent: str = ""
    ) -> AbstractContextManager[Span]:
        """An MCP tools/call: one this process sends to ``server`` (a client span), or with
        ``served`` one a client sent to ``fisk mcp`` (a server span continuing the client's
        ``traceparent``, from the request's ``_meta``, else a trace of its own)."""
        return nullcontext(NO_SPAN)

    def remote_agent(
        self, peer: str, request: str, *, traceparent: str = ""
    ) -> AbstractContextManager[Span]:
        """An a2a request of kind ``request`` (prompt, resume, answer, read) to agent ``peer``,
        covering its whole reply set; a message sent inside it carries its traceparent. A
        ``traceparent`` from a remote caller is its parent, else the span current here."""
        return nullcontext(NO_SPAN)

    def remote_tool(self, peer: str, tool: str) -> AbstractContextManager[Span]:
        """A call of the tool ``tool`` agent ``peer`` serves over a2a."""
        return nullcontext(NO_SPAN)

    def served_tool(self, call: ServedCall) -> AbstractContextManager[Span]:
        """A tool call this agent serves for a peer over a2a: a server span continuing the
        caller's trace (else the root of a trace of its own), opened before the call is
        admitted, so a refused call is a span too, and ended by the server after the reply
        went out. No metric: the tool metrics describe the calls this agent's model makes."""
        return nullcontext(NO_SPAN)

    def knowledge_search(self, top_k: int) -> AbstractContextManager[Span]:
        """One knowledge search, the query's embedding included."""
        return nullcontext(NO_SPAN)

    def knowledge_enumerate(self) -> AbstractContextManager[Span]:
        return nullcontext(NO_SPAN)

    def embedding_batch(self, model: str, inputs: int) -> AbstractContextManager[Span]:
        """One request for the embeddings of ``inputs`` texts."""
        return nullcontext(NO_SPAN)

    def degraded_search(self) -> None:
        """Count a knowledge search the vector tier could not answer. A counter, not only a
        span attribute, since spans are sampled and metrics are not."""

    def session_append(self, seconds: float, backend: str) -> None:
        """Record how long one session journal append took, measured by the caller: a span
        per append would double a run's span count."""

    def traceparent(self) -> str:
        """The W3C ``traceparent`` of the current span, for a message this process sends."""
        return ""

    def trace_id(self) -> str:
        """The current trace's id as 32 hex digits; empty when nothing is exported."""
        return ""

    def shutdown(self) -> Delivery:
        """Flush and stop, with a timeout of its own; the delivery counts."""
        return Delivery()


DISABLED = Telemetry()

# The handle whose span is current in this context, set by the live handle around each span it
# opens; lets a layer that holds no handle (an MCP session, an a2a client, a knowledge tool)
# open its span in the run's trace. Per context, never process-wide.
_ACTIVE: ContextVar[Telemetry | None] = ContextVar("fisk_ai_telemetry", default=None)


def current() -> Telemetry:
    """The handle of the run or served call current in this context; DISABLED outside one."""
    return _ACTIVE.get() or DISABLED


@contextlib.contextmanager
def activated(handle: Telemetry) -> Iterator[None]:
    """Make ``handle`` the one ``current`` returns inside the block."""
    token = _ACTIVE.set(handle)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


_EXPORTER_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def exporter_variables_set() -> list[str]:
    """The OTLP exporter variables set in the environment; they never turn export on."""
    return [name for name in _EXPORTER_VARIABLES if os.environ.get(name)]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _validate(settings: TelemetrySettings) -> str:
    """The endpoint to export to; checked only when export is on."""
    endpoint = settings.endpoint or DEFAULT_ENDPOINT
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TelemetryError(
            '"telemetry.endpoint" must be an http or https URL with a host, '
            f'not "{redact_url(endpoint)}"'
        )
    if settings.capture and parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise TelemetryError(
            '"telemetry.capture.enabled" sends conversation content, which plain http would '
            f'carry unencrypted to {parts.hostname}; use https in "telemetry.endpoint" or turn '
            "capture off"
        )
    ratio = settings.sample_ratio
    if ratio is not None and not 0.0 <= ratio <= 1.0:
        raise TelemetryError(f'"telemetry.sample_ratio" must be between 0 and 1, not {ratio}')
    return endpoint.rstrip("/")


def off_switch(settings: TelemetrySettings) -> str:
    """What turned export off, in the precedence chain's order: the off variable, the caller's
    switch, the SDK's variable; empty when export is on or the configuration never enabled it."""
    if os.environ.get(OFF_VARIABLE, "").lower() in ("1", "true", "yes"):
        return f"{OFF_VARIABLE}={os.environ[OFF_VARIABLE]}"
    if settings.disabled_by:
        return settings.disabled_by
    if settings.enabled and os.environ.get(SDK_DISABLED_VARIABLE, "").lower() == "true":
        return f"{SDK_DISABLED_VARIABLE}={os.environ[SDK_DISABLED_VARIABLE]}"
    return ""


def exporter_note(settings: TelemetrySettings, *, enabled_key: str = "telemetry.enabled") -> str:
    """The note for an operator whose OTLP exporter variables are set while export is off,
    naming the variables and the switch responsible; empty when export is on or none is set."""
    names = exporter_variables_set()
    if not names or export_on(settings):
        return ""
    switch = off_switch(settings) or f"{enabled_key} is not true"
    return (
        f"note: {' and '.join(names)} {'is' if len(names) == 1 else 'are'} set, but telemetry "
        f"is off ({switch}), so nothing is exported; the exporter variables never turn it on"
    )


def export_on(settings: TelemetrySettings) -> bool:
    """The precedence chain: the off variable, the caller's switch, the SDK's variable, the
    configuration. The exporter variables alone never turn export on."""
    if os.environ.get(OFF_VARIABLE, "").lower() in ("1", "true", "yes"):
        return False
    if settings.disabled_by:
        return False
    if os.environ.get(SDK_DISABLED_VARIABLE, "").lower() == "true":
        return False
    return settings.enabled


def start(settings: TelemetrySettings) -> Telemetry:
    """The handle for these settings: DISABLED when export is off, else a live provider
    (registering nothing globally)."""
    if not export_on(settings):
        return DISABLED
    endpoint = _validate(settings)
    from fisk_ai.telemetry.live import LiveTelemetry

    return LiveTelemetry(settings, endpoint)
