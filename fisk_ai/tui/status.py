"""The status bar's model: the run's state as a small state machine, and the counters.

The state word is always written out, so the bar reads the same on a monochrome terminal.
Elapsed time is left out on purpose: it kept climbing through idle waits for input.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import assert_never

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
    Suspended,
    TurnOutcome,
)
from fisk_ai.llm.types import Usage
from fisk_ai.presentation import retry_text, retry_wait_text
from fisk_ai.util.sanitize import single_line


class RunState(enum.Enum):
    RUNNING = "running"
    BLOCKED = "blocked"
    SUSPENDING = "suspending"
    SUSPENDED = "suspended"
    COMPLETE = "complete"
    ABORTED = "aborted"
    ERROR = "error"
    AWAITING_INPUT = "awaiting input"

    @property
    def word(self) -> str:
        return self.value

    @property
    def css_class(self) -> str:
        return "state-" + self.name.lower().replace("_", "-")


_SETTLED = frozenset(
    {
        RunState.SUSPENDED,
        RunState.COMPLETE,
        RunState.ABORTED,
        RunState.ERROR,
        RunState.AWAITING_INPUT,
    }
)

# The moves the bar accepts; anything else keeps the current state. A stop request wins over a
# question that arrives after it, so the bar never claims the run is running again.
_MOVES: dict[RunState, frozenset[RunState]] = {
    RunState.RUNNING: frozenset(
        {RunState.BLOCKED, RunState.SUSPENDING, *_SETTLED} - {RunState.AWAITING_INPUT}
    ),
    RunState.BLOCKED: frozenset({RunState.RUNNING, RunState.SUSPENDING, *_SETTLED}),
    RunState.SUSPENDING: frozenset(_SETTLED - {RunState.AWAITING_INPUT}),
    **{settled: frozenset({RunState.RUNNING, RunState.AWAITING_INPUT}) for settled in _SETTLED},
}


def can_move(current: RunState, target: RunState) -> bool:
    return target is current or target in _MOVES[current]


def state_after_turn(outcome: TurnOutcome) -> RunState:
    """How a turn that returned ended, before the chat bar opens."""
    match outcome:
        case Completed():
            return RunState.COMPLETE
        case Suspended() | Deferred():
            return RunState.SUSPENDED
        case Failed() | Crashed() | NotRun():
            return RunState.ERROR
        case Declined() | IterationsSpent() | BudgetSpent() | Abandoned():
            return RunState.ABORTED
        case _:
            assert_never(outcome)


@dataclass(frozen=True)
class Counters:
    """What the side panel counts: the four token counters kept apart, thinking, calls."""

    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0
    tool_calls: int = 0

    @property
    def tokens(self) -> int:
        """What the budget counts: cache reads and writes at full weight beside input and output."""
        usage = self.usage
        return (
            usage.input_tokens
            + usage.output_tokens
            + usage.cache_read_tokens
            + usage.cache_create_tokens
        )

    def after_model_call(self, usage: Usage) -> Counters:
        return replace(self, usage=self.usage + usage, model_calls=self.model_calls + 1)

    def after_tool_call(self) -> Counters:
        return replace(self, tool_calls=self.tool_calls + 1)


@dataclass(frozen=True)
class RetryWait:
    """The provider waits to try the model call again: the status bar counts the wait down."""

    seconds_left: int
    attempt: int
    attempts: int

    @property
    def short_text(self) -> str:
        return retry_wait_text(self.seconds_left)

    @property
    def text(self) -> str:
        return retry_text(self.seconds_left, self.attempt, self.attempts)

    def ticked(self) -> RetryWait:
        return replace(self, seconds_left=max(0, self.seconds_left - 1))


@dataclass(frozen=True)
class StatusLine:
    state: RunState = RunState.RUNNING
    counters: Counters = field(default_factory=Counters)
    model: str = ""
    session: str = ""
    activity: str = ""
    """The tool running now; empty when none is."""
    elapsed: int = 0
    """Seconds ``activity`` has been running."""
    help_key: str = "?"
    """The key that opens help where the focus is: F1 where ``?`` would be typed."""
    retry: RetryWait | None = None
    """The model call is waiting to be retried; shown in place of the activity."""

    def text(self, width: int | None = None) -> str:
        """The bar's text; given a ``width``, the parts that matter least go first (the
        session, the model, thinking, cache reads, tokens), then the activity is shortened, so
        the state word and the help hint always show."""
        state = f"[{self.state.word}]"
        hint = f"   {self.help_key} help"
        if self.state is RunState.AWAITING_INPUT:
            # The guide's words for leaving the chat bar; the conversation is kept.
            hint = f"   ctrl-d done{hint}"
        usage = self.counters.usage
        # As the run summary: uncached input over output (thinking included); then cache reads.
        optional = [f"tokens={usage.input_tokens:,}/{usage.output_tokens:,}"]
        if usage.cache_read_tokens:
            optional.append(f"cached={usage.cache_read_tokens:,}")
        optional.append(f"thinking={usage.thinking_tokens:,}")
        if self.model:
            optional.append(f"model={single_line(self.model, 40)}")
        if self.session:
            optional.append(f"session={self.session}")
        activity = f"{self.activity} {self.elapsed}s" if self.activity else ""
        if self.retry is not None:
            activity = self.retry.text

        def joined(activity: str, optional: list[str]) -> str:
            return "  ".join([state, *filter(None, [activity]), *optional]) + hint

        text = joined(activity, optional)
        if width is None:
            return text
        while optional and len(text) > width:
            optional.pop()
            text = joined(activity, optional)
        if len(text) > width and self.retry is not None:
            return joined(self.retry.short_text, [])
        if len(text) > width and activity:
            # Keep the seconds: they are what moves.
            seconds = f" {self.elapsed}s"
            room = width - len(joined("", [])) - 2 - len(seconds)
            name = self.activity
            shortened = name[: max(0, room - 3)] + "..." if room > 3 else ""
            text = joined((shortened + seconds).strip(), [])
        return text


def budget_text(counters: Counters, max_tokens: int) -> str:
    if max_tokens <= 0:
        return f"{counters.tokens:,} tokens"
    percent = counters.tokens * 100 // max_tokens
    return f"{counters.tokens:,} of {max_tokens:,} tokens ({percent}%)"
