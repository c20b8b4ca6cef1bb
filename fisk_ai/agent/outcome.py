"""How a turn ended: one sum type from the loop to the journal, the wire and the screens.

Every way a turn can end is one frozen variant. The loop and the runner produce them, the server
hands them to its channels, and each consumer maps them once: the journal's terminal record
in the runner, the a2a result or error in ``fisk_ai.a2a.outcome``, the status bar in
``fisk_ai.tui.status``. No table translates one vocabulary of endings into another.

This module and ``fisk_ai.agent.settings`` import neither the loop nor the runner, so a client
that only reads how turns ended loads no engine.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from fisk_ai.llm.types import Usage

__all__ = [
    "Abandoned",
    "BudgetSpent",
    "Completed",
    "Crashed",
    "Declined",
    "Deferred",
    "Failed",
    "IterationsSpent",
    "NotRun",
    "Refusal",
    "RunResult",
    "Suspended",
    "TurnOutcome",
    "continuable",
    "resumable",
    "waits",
]


class Refusal(enum.StrEnum):
    """Why a turn was refused before it ran. The values are the a2a error codes that say so."""

    REJECTED = "rejected"
    """A UserPromptSubmit hook refused the prompt; nothing of it was journaled."""
    NOT_STARTED = "not_started"
    """The conversation could not be opened as asked: completed, changed beyond the resume
    gate, or its journal unreadable."""
    CONVERSATION_BUSY = "conversation_busy"
    """Another worker is running a turn of the conversation."""
    TURN_NOT_TAKEN = "turn_not_taken"
    """A follow-up arrived while the conversation waits on a deferred call."""
    ALREADY_ANSWERED = "already_answered"
    """The call an answer names was answered in the meantime."""
    CAPACITY = "capacity"
    DRAINING = "draining"
    UNKNOWN_CONVERSATION = "unknown_conversation"
    UNKNOWN_CALL = "unknown_call"
    ANSWER_TOO_LARGE = "answer_too_large"
    DUPLICATE_REQUEST = "duplicate_request"


@dataclass(frozen=True)
class Completed:
    """The model answered the prompt."""

    answer: str = ""

    @property
    def message(self) -> str:
        return ""


@dataclass(frozen=True)
class Declined:
    """The model refused to answer (stop reason refusal); ``answer`` is what it said."""

    answer: str = ""
    message: str = "the model declined to answer (stop reason refusal)"


@dataclass(frozen=True)
class IterationsSpent:
    """The turn used every iteration llm.budget.max_iterations allows."""

    message: str


@dataclass(frozen=True)
class BudgetSpent:
    """The conversation reached llm.budget.max_tokens; it takes no more prompts."""

    message: str


@dataclass(frozen=True)
class Suspended:
    """The run parked at a safe point: a stop was asked for, or a question went unanswered."""

    message: str = ""


@dataclass(frozen=True)
class Deferred:
    """The run waits on the results of ``calls``, which arrive from outside it."""

    message: str
    calls: tuple[str, ...] = ()


@dataclass(frozen=True)
class Failed:
    """The turn could not go on: the model call failed, or its reply was cut off."""

    message: str


@dataclass(frozen=True)
class Crashed:
    """Something raised (a tool, a hook, the loop) or the journal was lost; ``message`` is the
    one sentence to report, empty when only a log has the details."""

    message: str = ""


@dataclass(frozen=True)
class Abandoned:
    """The process serving the turn stopped before the turn finished."""

    message: str = ""


@dataclass(frozen=True)
class NotRun:
    """The turn was refused before anything of it ran."""

    refusal: Refusal
    message: str


TurnOutcome = (
    Completed
    | Declined
    | IterationsSpent
    | BudgetSpent
    | Suspended
    | Deferred
    | Failed
    | Crashed
    | Abandoned
    | NotRun
)


def continuable(outcome: TurnOutcome) -> bool:
    """Whether an interactive conversation carries on from this ending with another prompt. Such
    a turn leaves the journal without a terminal record, so a crash later still leaves the
    conversation resumable."""
    return isinstance(outcome, Completed | Declined | IterationsSpent | Failed)


def resumable(outcome: TurnOutcome) -> bool:
    """Whether the conversation can be continued where this turn left it with a resume."""
    return isinstance(outcome, Suspended | Deferred | IterationsSpent | Failed)


def waits(outcome: TurnOutcome) -> bool:
    """Whether the run stopped part way, to be resumed rather than answered anew."""
    return isinstance(outcome, Suspended | Deferred)


@dataclass(frozen=True)
class RunResult:
    """How a turn ended, with the conversation's totals. ``usage``, ``llm_calls``,
    ``tool_calls`` and ``remote_tool_calls`` (the calls another agent ran) cover the whole
    conversation."""

    outcome: TurnOutcome
    session_id: str
    usage: Usage = field(default_factory=Usage)
    llm_calls: int = 0
    tool_calls: int = 0
    remote_tool_calls: int = 0

    @property
    def answer(self) -> str:
        """The model's final text when the turn completed, else empty."""
        return self.outcome.answer if isinstance(self.outcome, Completed) else ""

    @property
    def message(self) -> str:
        """Why the turn stopped when it did not complete."""
        return self.outcome.message
