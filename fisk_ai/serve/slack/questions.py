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
    DECLINE_REASON_LIMIT,
    Answer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    DeclineWithReason,
    InputQuestion,
    Question,
    SelectQuestion,
)
from fisk_ai.util.sanitize import single_line

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
    "reason_blocks",
]

ANSWER_ACTION = "answer"
INPUT_ACTION = "answer_text"
DECLINE_WHY = "No, and tell the agent why"
"""The approval button that opens a field for the reason, as the workstation's approval does."""
REASON_LABEL = "Why not? The agent reads this"
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
    """The typed answer; for a declined approval, the reason the model is given."""
    tool_use_id: str = ""
    opens_reason: bool = False
    """The press asked for the reason field; it answers nothing yet."""

    @property
    def reason(self) -> str:
        """The decline's reason, "" for any other answer."""
        if self.field is AnswerField.CHOICE and self.choice is ElicitChoice.NO:
            return (self.text or "").strip()
        return ""

    @property
    def shown(self) -> str:
        """What was chosen, in the words the question message records."""
        match self.field:
            case AnswerField.NO_OPERATOR:
                return "dismissed"
            case AnswerField.CHOICE if self.reason:
                return f"declined: “{single_line(self.reason, DECLINE_REASON_LIMIT)}”"
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
        case ApprovalQuestion() if pressed.reason:
            return DeclineWithReason(pressed.reason)
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
        "action_id": f"{ANSWER_ACTION}:{value['a']}:{value.get('i', value.get('c', ''))}"
        + (":why" if value.get("w") else ""),
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
            buttons = _approval_buttons(question_id, question.tool_use_id)
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


def _approval_call(question_id: str, tool_use_id: str) -> dict[str, Any]:
    return {
        "q": question_id,
        "k": AnswerKind.APPROVE.value,
        "a": AnswerField.CHOICE.value,
        "t": tool_use_id,
    }


def _approval_buttons(question_id: str, tool_use_id: str) -> list[dict[str, Any]]:
    call = _approval_call(question_id, tool_use_id)
    return [
        _button("Approve once", {**call, "c": "once"}, style="primary"),
        _button("Approve always", {**call, "c": "always"}),
        _button("Decline", {**call, "c": "no"}, style="danger"),
        _button(DECLINE_WHY, {**call, "c": "no", "w": 1}),
    ]


def reason_blocks(text: str, pressed: Pressed) -> list[Any]:
    """The approval message once somebody asked to say why not: the question, a field whose
    entry declines with that sentence as the reason, and the buttons still there to change
    one's mind."""
    call = _approval_call(pressed.question_id, pressed.tool_use_id)
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": escape(text)}},
        {
            "type": "input",
            "block_id": json.dumps({**call, "c": "no"}, separators=(",", ":")),
            "dispatch_action": True,
            "label": {"type": "plain_text", "text": REASON_LABEL},
            "element": {
                "type": "plain_text_input",
                "action_id": f"{INPUT_ACTION}:{pressed.question_id}",
                "max_length": DECLINE_REASON_LIMIT,
                "dispatch_action_config": {"trigger_actions_on": ["on_enter_pressed"]},
            },
        },
        {
            "type": "actions",
            "elements": _approval_buttons(pressed.question_id, pressed.tool_use_id)[:3],
        },
        {"type": "context", "elements": [{"type": "plain_text", "text": TYPED_REPLIES_NOTE}]},
    ]


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
            field = AnswerField(described.get("a", AnswerField.VALUE.value))
            # A free-text answer, or the reason of a decline typed into the approval's field.
            return Pressed(
                question_id=str(described["q"]),
                kind=AnswerKind(described["k"]),
                field=field,
                choice=ElicitChoice.NO if field is AnswerField.CHOICE else None,
                text=str(action.get("value") or ""),
                tool_use_id=str(described.get("t", "")),
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
            opens_reason=bool(value.get("w")),
        )
    except (ValueError, KeyError, TypeError):
        return None
