"""What leaves the agent loop: the a2a v1 event blocks and nothing else.

One vocabulary serves every surface (the line surface, the workstation, a remote caller, Slack),
so a tool call renders the same whether it is live, streamed or replayed from a journal.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from fisk_ai.llm.types import Usage
from fisk_ai.tools.base import ExecRecord


@dataclass(frozen=True)
class TextEvent:
    """Model prose. ``final`` marks the answer that ended the run rather than narration."""

    text: str
    final: bool = False


@dataclass(frozen=True)
class ThinkingEvent:
    text: str
    signature: str = ""
    provider: str = ""


@dataclass(frozen=True)
class ToolCallEvent:
    """A call the model made. ``command`` is the argument vector a command tool would run after
    the application path (empty for other tools), kept as tokens so a narrow surface can shorten
    long values; surfaces sanitise it before showing it."""

    id: str
    name: str
    input: Mapping[str, Any]
    command: tuple[str, ...] = ()

    @property
    def display(self) -> str:
        """The command line as one string, or the tool name for a tool that runs no command."""
        return " ".join(self.command) if self.command else self.name


@dataclass(frozen=True)
class ToolResultEvent:
    """A call's answer. ``is_error`` is a harness failure, distinct from a non-zero exit, which
    arrives in ``exec``; ``timed_out`` marks the failure of a tool stopped at its time limit."""

    call_id: str
    output: str
    is_error: bool = False
    exec: ExecRecord | None = None
    timed_out: bool = False


class StatusPhase(enum.StrEnum):
    """The phases this build reports. ``StatusEvent.phase`` stays a string, because a remote
    peer may report a phase this build does not know."""

    CALLING_LLM = "calling-llm"
    """A model call returned; ``usage`` is what it cost."""
    WORKING = "working"
    """A keepalive while a served run is quiet, so a caller can tell it from a lost worker."""
    REPLAY_START = "replay_start"
    """A stored conversation's replay begins."""
    REPLAY_END = "replay_end"
    """A replay ended; ``count`` blocks were sent, ``truncated`` when older ones were left out."""
    EXECUTING_TOOL = "executing-tool"
    """A keepalive while a served tool call runs."""
    STANDING_APPROVAL = "standing-approval"
    """The gated call last announced runs without asking, under an "always" the operator gave
    earlier in the conversation (tools run one at a time, so it is the one a surface shows)."""
    RETRYING = "retrying"
    """The model call was turned away for the moment (429, 529, another 5xx, a lost
    connection); the provider makes attempt ``attempt`` of ``attempts`` after
    ``wait_seconds``."""


@dataclass(frozen=True)
class StatusEvent:
    iteration: int = 0
    phase: str = ""
    usage: Usage | None = None
    count: int = 0
    truncated: bool = False
    attempt: int = 0
    attempts: int = 0
    wait_seconds: float = 0.0


class WarningKind(enum.StrEnum):
    """The warnings the agent loop raises. ``WarningEvent.kind`` stays a string, because a
    remote peer may send a kind this build does not know."""

    UNKNOWN_TOOL = "unknown_tool"
    """The model called a tool the run does not have; ``name`` is the tool."""
    TOOLS_SENT_DIRECTLY = "tools_sent_directly"
    """The tool set crossed the tool search threshold but every tool is sent in full, because
    the provider or the model has no tool search or llm.no_tool_search is set; ``name`` is the
    setting responsible (llm.provider, llm.model or llm.no_tool_search), ``count`` the number
    of tools."""
    RUN_CRASHED = "run_crashed"
    """A tool or a hook raised; ``name`` says which, ``error`` carries the stack (verbose only)."""
    MEMORY_INDEX_UNAVAILABLE = "memory_index_unavailable"
    """The memory store could not be listed as the run started, so the run has no index;
    ``error`` says why."""
    PII_FOUND = "pii_found"
    """The PII guard found personal data or a credential (or its scan failed), raised once per
    run; ``name`` says where, ``params`` the checks that matched, ``count`` how many findings,
    ``error`` the sentence. The matched text itself is never carried."""


@dataclass(frozen=True)
class WarningEvent:
    """An advisory. It carries the warning, not a sentence: the wording belongs to the surface."""

    kind: str
    name: str = ""
    count: int = 0
    params: tuple[str, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class PromptEvent:
    """A turn somebody asked for, sent when a stored conversation is replayed."""

    text: str


Event = (
    TextEvent
    | ThinkingEvent
    | ToolCallEvent
    | ToolResultEvent
    | StatusEvent
    | WarningEvent
    | PromptEvent
)


@dataclass(frozen=True)
class TextDeltaEvent:
    """The next piece of the model's prose while the call is still running. A hint for a
    surface showing the answer as it is written: the complete ``TextEvent`` still follows the
    model turn, and a retrying status voids the pieces of the call so far."""

    text: str


@dataclass(frozen=True)
class ThinkingDeltaEvent:
    """The next piece of the model's thinking while the call is still running; the complete
    ``ThinkingEvent`` still follows."""

    text: str


DeltaEvent = TextDeltaEvent | ThinkingDeltaEvent
"""Kept out of ``Event``: they are never journaled or replayed, and only a sink that says it
takes them (``DeltaSink``) is handed them."""


class EventSink(Protocol):
    def emit(self, event: Event) -> None:
        """Receive one event on the run's own task; must not block."""
        ...


@runtime_checkable
class DeltaSink(Protocol):
    """A sink that also takes the pieces of an answer as it is written."""

    def emit_delta(self, event: DeltaEvent) -> None:
        """Receive one piece on the run's own task; must not block."""
        ...
