"""Questions in a Slack thread: the message with its buttons, and what a press answers.

A question message is self-describing: each button carries the question's kind, its id and the
answer it gives (and for an approval the call it approves), so a press days later, or on a
worker that was restarted in between, still says what was answered. The session derives from
the thread the press came from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fisk_ai.a2a.messages import Answer as LateAnswer
from fisk_ai.a2a.vocabulary import AnswerField, AnswerKind, ElicitChoice
from fisk_ai.serve.slack.text import escape
from fisk_ai.tools.builtin.hitl import ASK_HUMAN_CONFIRM, ASK_HUMAN_INPUT, ASK_HUMAN_SELECT
from fisk_ai.tools.questions import (
    Answer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    InputQuestion,
    Question,
    SelectQuestion,
)

__all__ = [
    "ANSWER_ACTION",
    "INPUT_ACTION",
    "Pressed",
    "answered_blocks",
    "live_answer",
    "parse_press",
    "question_blocks",
    "question_kind",
    "question_tool",
]

ANSWER_ACTION = "answer"
INPUT_ACTION = "answer_text"
SECTION_LIMIT = 3000
"""Characters a section's text holds, shared by the question and a selection's options."""
TYPED_REPLIES_NOTE = (
    "Replies typed in this thread do not reach me: use the buttons, or the field for a "
    "free-text answer (mentioning me answers it too)."
)
_TOOL_FOR_KIND = {
    AnswerKind.CONFIRM: ASK_HUMAN_CONFIRM,
    AnswerKind.SELECT: ASK_HUMAN_SELECT,
    AnswerKind.INPUT: ASK_HUMAN_INPUT,
}


@dataclass(frozen=True)
class Pressed:
    """What a press on a question message answers."""

    question_id: str
    kind: AnswerKind
    field: AnswerField
    choice: ElicitChoice | None = None
    confirmed: bool | None = None
    index: int | None = None
    text: str | None = None
    tool_use_id: str = ""

    @property
    def shown(self) -> str:
        """What was chosen, in the words the question message records."""
        match self.field:
            case AnswerField.NO_OPERATOR:
                return "dismissed"
            case AnswerField.CHOICE:
                return {"once": "approved once", "always": "approved always"}.get(
                    self.choice.value if self.choice else "", "declined"
                )
            case AnswerField.CONFIRMED:
                return "yes" if self.confirmed else "no"
            case AnswerField.VALUE if self.index is not None:
                return f"option {self.index + 1}"
            case _:
                return f"“{self.text or ''}”"

    def late(self, tool_use_id: str, option: str | None = None) -> LateAnswer:
        """The answer for the call ``tool_use_id`` once its run has ended; a selection names
        its ``option`` as the model wrote it."""
        value = option if self.index is not None else self.text
        return LateAnswer(
            tool_use_id=tool_use_id,
            kind=self.kind,
            answer=self.field,
            choice=self.choice,
            confirmed=self.confirmed,
            value=value if self.field is AnswerField.VALUE else None,
        )


def question_tool(kind: AnswerKind) -> str:
    """The ask_human tool whose deferred call a late answer of ``kind`` answers."""
    return _TOOL_FOR_KIND[kind]


def live_answer(question: Question, pressed: Pressed) -> Answer:
    """The Prompter answer a press gives a question still being waited on."""
    if pressed.field is AnswerField.NO_OPERATOR:
        return ApprovalChoice.NO if isinstance(question, ApprovalQuestion) else None
    match question:
        case ApprovalQuestion():
            return ApprovalChoice((pressed.choice or ElicitChoice.NO).value)
        case ConfirmQuestion():
            return bool(pressed.confirmed)
        case SelectQuestion():
            index = pressed.index
            return index if index is not None and 0 <= index < len(question.options) else None
        case InputQuestion():
            return pressed.text or ""


def question_kind(question: Question) -> AnswerKind:
    """The kind of ``question``, as its buttons and the operator lines name it."""
    match question:
        case ApprovalQuestion():
            return AnswerKind.APPROVE
        case ConfirmQuestion():
            return AnswerKind.CONFIRM
        case SelectQuestion():
            return AnswerKind.SELECT
        case InputQuestion():
            return AnswerKind.INPUT


def _button(label: str, value: dict[str, Any], *, style: str = "") -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "action_id": f"{ANSWER_ACTION}:{value['a']}:{value.get('i', value.get('c', ''))}",
        "text": {"type": "plain_text", "text": label[:75]},
        "value": json.dumps(value, separators=(",", ":")),
    }
    if style:
        button["style"] = style
    return button


def question_blocks(question: Question, question_id: str, asker: str) -> tuple[str, list[Any]]:
    """The question message: its notification text and its blocks. It opens by mentioning
    ``asker``, whoever started the turn, so they are notified."""
    kind = question_kind(question)
    base: dict[str, Any] = {"q": question_id, "k": kind.value}
    buttons: list[dict[str, Any]] = []
    dismiss = _button("Dismiss", {**base, "a": AnswerField.NO_OPERATOR.value})
    extra: list[dict[str, Any]] = []
    match question:
        case ApprovalQuestion():
            text = f"May I run `{question.display}`?"
            call = {**base, "a": AnswerField.CHOICE.value, "t": question.tool_use_id}
            buttons = [
                _button("Approve once", {**call, "c": "once"}, style="primary"),
                _button("Approve always", {**call, "c": "always"}),
                _button("Decline", {**call, "c": "no"}, style="danger"),
            ]
        case ConfirmQuestion():
            text = question.question
            buttons = [
                _button("Yes", {**base, "a": AnswerField.CONFIRMED.value, "c": "yes"}),
                _button("No", {**base, "a": AnswerField.CONFIRMED.value, "c": "no"}),
                dismiss,
            ]
        case SelectQuestion():
            share = max(1, (SECTION_LIMIT - len(question.question) - 10) // len(question.options))
            listed = "\n".join(
                f"{number}. {_cut(option, share - len(str(number)) - 3)}"
                for number, option in enumerate(question.options, start=1)
            )
            text = f"{question.question}\n{listed}"
            buttons = [
                _button(str(index + 1), {**base, "a": AnswerField.VALUE.value, "i": index})
                for index in range(len(question.options))
            ]
            buttons.append(dismiss)
        case InputQuestion():
            text = question.question
            element: dict[str, Any] = {
                "type": "plain_text_input",
                "action_id": f"{INPUT_ACTION}:{question_id}",
                "dispatch_action_config": {"trigger_actions_on": ["on_enter_pressed"]},
            }
            if question.default:
                element["initial_value"] = question.default
            extra.append(
                {
                    "type": "input",
                    "block_id": json.dumps({**base, "a": AnswerField.VALUE.value}),
                    "dispatch_action": True,
                    "label": {"type": "plain_text", "text": "Your answer"},
                    "element": element,
                }
            )
            buttons = [dismiss]
    heading = f"<@{asker}> {escape(_cut(text, SECTION_LIMIT - 20))}"
    blocks: list[Any] = [{"type": "section", "text": {"type": "mrkdwn", "text": heading}}]
    blocks += extra
    # Slack allows 25 elements in one actions block.
    for start in range(0, len(buttons), 25):
        blocks.append({"type": "actions", "elements": buttons[start : start + 25]})
    blocks.append(
        {"type": "context", "elements": [{"type": "plain_text", "text": TYPED_REPLIES_NOTE}]}
    )
    return f"Question for <@{asker}>: {_cut(text, 200)}", blocks


def answered_blocks(text: str, who: str, pressed: Pressed) -> list[Any]:
    """The question message once somebody answered it: who answered and what they chose."""
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": escape(text)}},
        {
            "type": "context",
            "elements": [{"type": "plain_text", "text": f"Answered by {who}: {pressed.shown}"}],
        },
    ]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def parse_press(action: dict[str, Any], block_id: str = "") -> Pressed | None:
    """What a block_actions action on a question message answers; None for anything else."""
    try:
        if action.get("type") == "plain_text_input":
            described = json.loads(action.get("block_id") or block_id)
            return Pressed(
                question_id=str(described["q"]),
                kind=AnswerKind(described["k"]),
                field=AnswerField.VALUE,
                text=str(action.get("value") or ""),
            )
        value = json.loads(action.get("value", ""))
        kind = AnswerKind(value["k"])
        field = AnswerField(value["a"])
        choice = value.get("c")
        return Pressed(
            question_id=str(value["q"]),
            kind=kind,
            field=field,
            choice=ElicitChoice(choice) if field is AnswerField.CHOICE else None,
            confirmed=(choice == "yes") if field is AnswerField.CONFIRMED else None,
            index=int(value["i"]) if "i" in value else None,
            tool_use_id=str(value.get("t", "")),
        )
    except (ValueError, KeyError, TypeError):
        return None
