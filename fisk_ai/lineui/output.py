"""`fisk run --output json|stream-json`: a run as JSON on stdout, for a script or a CI job.

``json`` writes one object when the run ends (the run result); ``stream-json`` writes one line per
event as it happens, each the block the a2a wire carries for it, and the run result last. The
shapes are the JSON Schemas in ``schemas/`` beside this module, which ship in the package. Each
outcome has its own exit code in these modes (``exit_code``); text mode keeps the codes its
documentation has always given.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO, assert_never

from fisk_ai.agent.events import Event, ToolCallEvent, ToolResultEvent
from fisk_ai.agent.outcome import (
    Abandoned,
    BudgetSpent,
    Completed,
    Crashed,
    Declined,
    Deferred,
    Failed,
    IterationsSpent,
    NotRun,
    RunResult,
    Suspended,
    TurnOutcome,
)
from fisk_ai.llm.types import Usage

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from fisk_ai.a2a.messages import ReplyHeader
    from fisk_ai.agent.events import EventSink
    from fisk_ai.sessions import SessionStore

__all__ = [
    "SCHEMA_NAMES",
    "JsonRun",
    "OutputFormat",
    "Pending",
    "exit_code",
    "pending_of",
    "schema",
    "validator",
]

RESULT_SCHEMA = "run-result.schema.json"
EVENT_SCHEMA = "run-event.schema.json"
SCHEMA_NAMES = (RESULT_SCHEMA, EVENT_SCHEMA)

EXIT_INTERRUPTED = 130


class OutputFormat(enum.StrEnum):
    """What `fisk run` writes on stdout."""

    TEXT = "text"
    """The answer alone, rendered for a terminal, raw for a pipe."""
    JSON = "json"
    """One run result object when the run ends."""
    STREAM_JSON = "stream-json"
    """One line per event as it happens, and the run result last."""


def exit_code(outcome: TurnOutcome | None) -> int:
    """The exit code naming how a run ended, in the JSON modes; None is a run given up by a
    second interrupt."""
    match outcome:
        case Completed():
            return 0
        case Failed() | Crashed() | NotRun():
            return 3
        case Declined():
            return 4
        case IterationsSpent():
            return 5
        case BudgetSpent():
            return 6
        case Deferred():
            return 7
        case Suspended() | Abandoned() | None:
            return EXIT_INTERRUPTED
        case _:
            assert_never(outcome)


def outcome_name(outcome: TurnOutcome) -> str:
    """The outcome variant's name as a JSON value: ``IterationsSpent`` is ``iterations_spent``."""
    name = type(outcome).__name__
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


@dataclass(frozen=True)
class Pending:
    """A call the conversation still owes a result: ``deferred`` when its answer comes from
    outside the run (``note`` says what it waits for), else a call still to run."""

    call_id: str
    name: str
    deferred: bool
    note: str = ""


async def pending_of(store: SessionStore, session_id: str) -> tuple[Pending, ...]:
    """The calls the journal of ``session_id`` still waits on: deferred ones first, then the
    calls of the interrupted turn still to run."""
    from fisk_ai.sessions import fold

    conversation = fold(await store.read(session_id))
    deferred = tuple(
        Pending(record.tool_use_id, record.tool_name, deferred=True, note=record.note)
        for record in conversation.deferred
    )
    to_run = tuple(Pending(call.id, call.name, deferred=False) for call in conversation.pending)
    return deferred + to_run


@dataclass
class _ToolCall:
    call: ToolCallEvent
    result: ToolResultEvent | None = None

    def as_json(self) -> dict[str, Any]:
        result = self.result
        executed = None if result is None else result.exec
        return {
            "id": self.call.id,
            "name": self.call.name,
            "argv": list(self.call.command),
            "input": dict(self.call.input),
            "status": _call_status(result),
            "exit_code": None if executed is None else executed.exit_code,
        }


def _call_status(result: ToolResultEvent | None) -> str:
    if result is None:
        return "unanswered"
    if result.timed_out:
        return "timed_out"
    if result.is_error:
        return "error"
    return "ok"


@dataclass
class JsonRun:
    """An event sink for a JSON run: passes each event on to ``surface`` (the stderr lines),
    writes it to ``stdout`` as a line with ``stream``, and keeps the tool calls for the run
    result."""

    surface: EventSink
    stdout: TextIO
    stream: bool
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    _calls: dict[str, _ToolCall] = field(default_factory=dict)
    _header: ReplyHeader | None = None

    def emit(self, event: Event) -> None:
        self.surface.emit(event)
        if isinstance(event, ToolCallEvent):
            self._calls[event.id] = _ToolCall(event)
        elif isinstance(event, ToolResultEvent) and event.call_id in self._calls:
            self._calls[event.call_id].result = event
        if self.stream:
            self._write(self._event_line(event))

    def _event_line(self, event: Event) -> dict[str, Any]:
        # The block is the one the a2a wire carries for the event, so a consumer of either
        # reads the same fields; the framing around it belongs to the wire and is left out.
        from fisk_ai.a2a.events import event_message

        message = event_message(event, self._framing())
        kind = message.protocol.rsplit(".event.", 1)[-1]
        return {
            "type": "event",
            "kind": kind,
            "time": _timestamp(datetime.now(UTC)),
            "block": message.block.model_dump(mode="json"),
        }

    def _framing(self) -> ReplyHeader:
        if self._header is None:
            from fisk_ai.a2a.client import DEFAULT_CLIENT_IDENTITY
            from fisk_ai.a2a.messages import ReplyHeader

            self._header = ReplyHeader(
                id="line",
                request="line",
                conversation="line",
                sequence=0,
                time=self.started,
                sender=DEFAULT_CLIENT_IDENTITY,
                recipient=None,
            )
        return self._header

    def finish(
        self,
        result: RunResult | None,
        *,
        session_id: str,
        model: str,
        pending: tuple[Pending, ...] = (),
        resume_command: str = "",
    ) -> int:
        """Write the run result and return the exit code it names. ``result`` is None for a run
        given up at a second interrupt, which has no totals."""
        ended = datetime.now(UTC)
        code = exit_code(None if result is None else result.outcome)
        self._write(
            {
                "type": "result",
                "answer": "" if result is None else result.answer,
                "outcome": _outcome_json(result),
                "session_id": session_id,
                "model": model or None,
                "usage": _usage_json(result),
                "llm_calls": 0 if result is None else result.llm_calls,
                "tool_calls": 0 if result is None else result.tool_calls,
                "remote_tool_calls": 0 if result is None else result.remote_tool_calls,
                "calls": [call.as_json() for call in self._calls.values()],
                "started": _timestamp(self.started),
                "duration_ms": round((ended - self.started).total_seconds() * 1000),
                "pending": [
                    {
                        "call_id": item.call_id,
                        "name": item.name,
                        "deferred": item.deferred,
                        "note": item.note,
                    }
                    for item in pending
                ],
                "resume_command": resume_command or None,
                "exit_code": code,
            }
        )
        return code

    def _write(self, value: dict[str, Any]) -> None:
        self.stdout.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.stdout.flush()


def _outcome_json(result: RunResult | None) -> dict[str, Any]:
    if result is None:
        return {
            "kind": "abandoned",
            "reason": "the run was given up at a second interrupt; the conversation is kept up "
            "to its last step",
        }
    outcome = result.outcome
    described: dict[str, Any] = {"kind": outcome_name(outcome), "reason": outcome.message}
    if isinstance(outcome, Declined):
        described["text"] = outcome.answer
    if isinstance(outcome, NotRun):
        described["refusal"] = outcome.refusal.value
    return described


def _usage_json(result: RunResult | None) -> dict[str, int]:
    usage = Usage() if result is None else result.usage
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_create_tokens,
        "thinking_tokens": usage.thinking_tokens,
    }


def _timestamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def schema(name: str) -> dict[str, Any]:
    """The shipped JSON Schema ``name`` (one of ``SCHEMA_NAMES``)."""
    from importlib import resources

    text = resources.files("fisk_ai.lineui").joinpath("schemas", name).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def validator(name: str) -> Draft202012Validator:
    """A validator for the shipped schema ``name``, which resolves the references between the
    shipped schemas and checks formats (a test's, or a CI job's that checks what it read)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    registry: Registry[Any] = Registry().with_resources(
        (schema(each)["$id"], Resource.from_contents(schema(each))) for each in SCHEMA_NAMES
    )
    return Draft202012Validator(
        schema(name), registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER
    )
