"""Questions the run puts to a person, and the surface that answers them.

The confirm gate and the ask_human_* tools ask through a ``Prompter``. Each surface answers its
own way (a terminal prompt, a modal, an elicit request over a2a, MCP elicitation). With no
surface the answer is always the safe one: the gate declines and the questions come back empty.
"""

from __future__ import annotations

import enum
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from fisk_ai.errors import FiskError
from fisk_ai.util.sanitize import single_line, strip_control

DECLINE_REASON_LIMIT = 500
"""The most of an operator's reason for a decline that reaches the model, in characters."""
SHELL_WORD_LIMIT = 1000
"""The most of one argument an approval shows, in characters; what is cut is marked."""
DISPLAY_LINE_LIMIT = 2000
"""The most of a display line an approval without an argument vector shows, in characters."""


class ApprovalChoice(enum.Enum):
    NO = "no"
    ONCE = "once"
    ALWAYS = "always"


@dataclass(frozen=True)
class DeclineWithReason:
    """No, with the operator's sentence for the model: as final as a plain No."""

    reason: str

    @property
    def sentence(self) -> str:
        """The reason as the model may read it: one line, control sequences removed, bounded."""
        return single_line(self.reason, DECLINE_REASON_LIMIT)


ApprovalAnswer = ApprovalChoice | DeclineWithReason


@dataclass(frozen=True)
class ApprovalQuestion:
    """May this gated call run? ``display`` is its command line, ``trigger`` the gating tag,
    ``argv`` the argument vector it runs after the application path (empty when the asker sent
    none: a Go peer, or a tool that runs no command)."""

    tool_use_id: str
    tool_name: str
    command: str
    display: str
    trigger: str
    argv: tuple[str, ...] = ()

    def shell_words(self) -> tuple[str, ...]:
        """The command line word by word, each sanitized and quoted as a shell would need it
        typed, so one argument holding ``;`` or ``$(...)`` reads as one word. Without an
        argument vector the display line is the one word, as it was sent."""
        if not self.argv:
            return (single_line(self.display, DISPLAY_LINE_LIMIT),)
        return tuple(shell_word(argument) for argument in self.argv)

    def always_covers(self) -> str:
        """What an "always" answer allows, exactly as the gate grants it: the tool by name,
        whatever its arguments, until the conversation ends."""
        return (
            f'run "{single_line(self.command)}" with any arguments, without asking, '
            "for the rest of this conversation"
        )


@dataclass(frozen=True)
class ConfirmQuestion:
    question: str


@dataclass(frozen=True)
class SelectQuestion:
    question: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class InputQuestion:
    question: str
    default: str = ""


@dataclass(frozen=True)
class NobodyToAsk:
    """No answer, because the surface had nobody to put the question to (a caller with no
    operator); ``reason`` says so in a clause the model reads. Not a decline: nobody decided."""

    reason: str


Question = ApprovalQuestion | ConfirmQuestion | SelectQuestion | InputQuestion
Answer = ApprovalAnswer | NobodyToAsk | bool | int | str | None


class QuestionInterrupted(FiskError):
    """The operator interrupted a question or closed its input. Not an answer: the run stops,
    the conversation is kept, and the same question is asked again when it continues."""


class QuestionUnanswered(QuestionInterrupted):
    """Nobody answered within the question's window (a remote caller went quiet). Still not an
    answer: the confirm gate stops the run as for an interrupt, so the gated call is put again
    on resume, while a question tool defers its call, to be answered whenever somebody can."""


class Prompter(Protocol):
    def can_prompt(self) -> bool:
        """Whether a person could answer right now."""
        ...

    async def ask(self, question: Question) -> Answer:
        """The answer: an ApprovalChoice or a DeclineWithReason for an approval, a bool for a
        confirm, an option index for a select, the text for an input; None when the person
        gave none; NobodyToAsk when there was no person to ask. Raises QuestionInterrupted."""
        ...


def shell_word(argument: str) -> str:
    """One argument as a shell would need it typed, sanitized for one line of a display:
    control sequences removed, a newline or tab shown as a space, cut (and marked) past
    SHELL_WORD_LIMIT characters."""
    flat = strip_control(argument).replace("\n", " ").replace("\t", " ")
    if len(flat) > SHELL_WORD_LIMIT:
        return shlex.quote(flat[:SHELL_WORD_LIMIT]) + "..."
    return shlex.quote(flat)


class NoOperator:
    """The prompter of a run nobody can answer: it never asks."""

    def can_prompt(self) -> bool:
        return False

    async def ask(self, question: Question) -> Answer:
        return ApprovalChoice.NO if isinstance(question, ApprovalQuestion) else None


def option_text(options: Sequence[str], index: int | None) -> str | None:
    return options[index] if index is not None and 0 <= index < len(options) else None
