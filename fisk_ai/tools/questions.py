"""Questions the run puts to a person, and the surface that answers them.

The confirm gate and the ask_human_* tools ask through a ``Prompter``. Each surface answers its
own way (a terminal prompt, a modal, an elicit request over a2a, MCP elicitation). With no
surface the answer is always the safe one: the gate declines and the questions come back empty.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from fisk_ai.errors import FiskError


class ApprovalChoice(enum.Enum):
    NO = "no"
    ONCE = "once"
    ALWAYS = "always"


@dataclass(frozen=True)
class ApprovalQuestion:
    """May this gated call run? ``display`` is its command line, ``trigger`` the gating tag."""

    tool_use_id: str
    tool_name: str
    command: str
    display: str
    trigger: str


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


Question = ApprovalQuestion | ConfirmQuestion | SelectQuestion | InputQuestion
Answer = ApprovalChoice | bool | int | str | None


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
        """The answer: an ApprovalChoice for an approval, a bool for a confirm, an option index
        for a select, the text for an input; None when the person gave none. Raises
        QuestionInterrupted."""
        ...


class NoOperator:
    """The prompter of a run nobody can answer: it never asks."""

    def can_prompt(self) -> bool:
        return False

    async def ask(self, question: Question) -> Answer:
        return ApprovalChoice.NO if isinstance(question, ApprovalQuestion) else None


def option_text(options: Sequence[str], index: int | None) -> str | None:
    return options[index] if index is not None and 0 <= index < len(options) else None
