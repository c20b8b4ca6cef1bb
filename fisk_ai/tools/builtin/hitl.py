"""The ask_human_* tools: the model puts its own question to the operator.

A question nobody can answer is not an error. With no prompter, or one that cannot reach a person,
each tool returns its negative answer with a reason, so the model can carry on or stop rather
than wait on a prompt nobody will see. An interrupted question is not an answer either: the
prompter's QuestionInterrupted propagates, the run stops, and nothing is recorded for the call.
A question nobody answered in its window (QuestionUnanswered) defers the call instead: the
conversation waits on it, and an answer supplied later is its result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fisk_ai.tools.base import Deferral, ExecDeps, Outcome, Presentation, Tool
from fisk_ai.tools.builtin.base import BuiltinTool
from fisk_ai.tools.questions import (
    ConfirmQuestion,
    InputQuestion,
    Prompter,
    QuestionUnanswered,
    SelectQuestion,
    option_text,
)
from fisk_ai.tools.toolset import ToolSource
from fisk_ai.util.sanitize import single_line

__all__ = [
    "ASK_HUMAN_CONFIRM",
    "ASK_HUMAN_INPUT",
    "ASK_HUMAN_SELECT",
    "HITL_TOOL_NAMES",
    "MAX_OPTIONS",
    "NO_OPERATOR_REASON",
    "QUESTION_LIMIT",
    "AskHumanConfirm",
    "AskHumanInput",
    "AskHumanSelect",
    "hitl_source",
    "hitl_tools",
]

ASK_HUMAN_CONFIRM = "ask_human_confirm"
ASK_HUMAN_SELECT = "ask_human_select"
ASK_HUMAN_INPUT = "ask_human_input"
HITL_TOOL_NAMES = (ASK_HUMAN_CONFIRM, ASK_HUMAN_SELECT, ASK_HUMAN_INPUT)

QUESTION_LIMIT = 500
MAX_OPTIONS = 25
NO_OPERATOR_REASON = (
    "no interactive terminal is attached, so no operator could be asked; carry on without "
    "an answer or stop"
)


def shown_text(text: str) -> str:
    """Model text as an operator is shown it: one line, no control sequences, capped."""
    flat = single_line(text)
    return flat if len(flat) <= QUESTION_LIMIT else flat[:QUESTION_LIMIT] + "…"


def _json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _question_property(purpose: str) -> dict[str, Any]:
    return {"type": "string", "description": purpose}


class _AskHuman(BuiltinTool):
    """What the three questions share: they draw their own question and go to the prompter.
    A question the model cannot find is one it writes as prose, which ends the run instead of
    reaching the operator, so like every built-in they are never deferred."""

    @property
    def presentation(self) -> Presentation:
        return Presentation.SELF_RENDERED

    @property
    def asks_operator(self) -> bool:
        return True

    async def run(self, arguments: Mapping[str, Any], deps: ExecDeps) -> Outcome:
        question = shown_text(str(arguments.get("question", "")))
        if not question:
            return Outcome(f'tool "{self.name}" needs a question that is not empty', is_error=True)
        try:
            return await self._ask(question, arguments, deps.prompter)
        except QuestionUnanswered:
            # The person may still answer, later and elsewhere: the call waits for them rather
            # than being asked again, and their answer becomes its result.
            return Outcome(deferral=Deferral(note=f"waiting for an answer to: {question}"))

    async def _ask(
        self, question: str, arguments: Mapping[str, Any], prompter: Prompter | None
    ) -> Outcome:
        raise NotImplementedError


def _reachable(prompter: Prompter | None) -> Prompter | None:
    return prompter if prompter is not None and prompter.can_prompt() else None


class AskHumanConfirm(_AskHuman):
    name = ASK_HUMAN_CONFIRM
    description = (
        "Ask the human operator a yes/no question at the terminal and wait for the answer. "
        'Returns {"confirmed": true} or {"confirmed": false, "reason": "..."}.'
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"question": _question_property("The yes/no question to ask.")},
        "required": ["question"],
        "additionalProperties": False,
    }

    async def _ask(
        self, question: str, arguments: Mapping[str, Any], prompter: Prompter | None
    ) -> Outcome:
        reachable = _reachable(prompter)
        if reachable is None:
            return Outcome(_json({"confirmed": False, "reason": NO_OPERATOR_REASON}))
        answer = await reachable.ask(ConfirmQuestion(question))
        if answer is True:
            return Outcome(_json({"confirmed": True}))
        return Outcome(_json({"confirmed": False, "reason": "the operator answered no"}))


class AskHumanSelect(_AskHuman):
    name = ASK_HUMAN_SELECT
    description = (
        "Ask the human operator to choose one option from a list you provide (1 to 25 "
        'options) and wait for the choice. Returns {"selected": "<option>"} or '
        '{"selected": null, "reason": "..."}.'
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "question": _question_property("What the operator is choosing."),
            "options": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": MAX_OPTIONS,
                "description": "The options to choose from, in the order to show them.",
            },
        },
        "required": ["question", "options"],
        "additionalProperties": False,
    }

    async def _ask(
        self, question: str, arguments: Mapping[str, Any], prompter: Prompter | None
    ) -> Outcome:
        options: Sequence[str] = arguments["options"]
        if not options or len(options) > MAX_OPTIONS:
            return Outcome(
                f'tool "{self.name}" needs between 1 and {MAX_OPTIONS} options, not {len(options)}',
                is_error=True,
            )
        reachable = _reachable(prompter)
        if reachable is None:
            return Outcome(_json({"selected": None, "reason": NO_OPERATOR_REASON}))
        shown = tuple(shown_text(option) for option in options)
        answer = await reachable.ask(SelectQuestion(question, shown))
        # The model gets back its own option text, not the cleaned copy the operator saw, so
        # it can match the answer against the list it sent.
        index = answer if isinstance(answer, int) and not isinstance(answer, bool) else None
        selected = option_text(options, index)
        if selected is None:
            return Outcome(_json({"selected": None, "reason": "the operator made no selection"}))
        return Outcome(_json({"selected": selected}))


class AskHumanInput(_AskHuman):
    name = ASK_HUMAN_INPUT
    description = (
        "Ask the human operator to type a free-text value at the terminal, optionally "
        'pre-filled with a default they can accept or edit. Returns {"value": "<text>"} '
        '(possibly empty) or {"value": null, "reason": "..."}.'
    )
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "question": _question_property("What value to ask for."),
            "default": {
                "type": "string",
                "description": "A value to pre-fill, which the operator may accept or edit.",
            },
        },
        "required": ["question"],
        "additionalProperties": False,
    }

    async def _ask(
        self, question: str, arguments: Mapping[str, Any], prompter: Prompter | None
    ) -> Outcome:
        reachable = _reachable(prompter)
        if reachable is None:
            return Outcome(_json({"value": None, "reason": NO_OPERATOR_REASON}))
        default = shown_text(str(arguments.get("default", "")))
        answer = await reachable.ask(InputQuestion(question, default))
        if not isinstance(answer, str):
            return Outcome(_json({"value": None, "reason": "the operator gave no value"}))
        return Outcome(_json({"value": answer}))


def hitl_tools() -> tuple[Tool, ...]:
    """The three ask_human_* tools, in the order they are offered."""
    return (AskHumanConfirm(), AskHumanSelect(), AskHumanInput())


def hitl_source() -> ToolSource:
    """The ask_human_* tools as a source for a run's tool set, labelled by the key that adds
    them, so a name collision names it."""
    return ToolSource("harness.human_in_the_loop", hitl_tools())
