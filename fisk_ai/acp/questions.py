"""A run's questions as ACP permission requests, and the client's choice as the run's answer.

A gated command offers the four ACP options: allow once, allow always (for the rest of this
conversation, as the gate grants it), reject once, and reject always, which declines and
refuses that command without asking again until this session ends in this process: fisk keeps
no standing refusal past it. An ask_human confirm offers yes and no, a select one option per
choice. A free-text question has no ACP permission shape, so it is shown as an agent message
and left unanswered; the user answers it in the next prompt. A request the client cancels, or cannot
answer, is no answer: the gate declines.
"""

from __future__ import annotations

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
)

from fisk_ai.tools.questions import (
    Answer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    InputQuestion,
    SelectQuestion,
)
from fisk_ai.util.sanitize import single_line

__all__ = [
    "REJECT_ALWAYS_NOTICE",
    "REMEMBERED_REFUSAL",
    "answer_of",
    "input_notice",
    "options_for",
    "rejects_always",
]

ALLOW_ONCE = "allow-once"
ALLOW_ALWAYS = "allow-always"
REJECT_ONCE = "reject-once"
REJECT_ALWAYS = "reject-always"
YES = "yes"
NO = "no"

REJECT_ALWAYS_NOTICE = (
    "Declined. fisk keeps no refusal past this conversation: it declines {command} without "
    "asking for the rest of this session, and a later session asks again."
)
REMEMBERED_REFUSAL = "Declined {command} without asking: it was rejected always in this session."

PermissionQuestion = ApprovalQuestion | ConfirmQuestion | SelectQuestion


def options_for(question: PermissionQuestion) -> list[PermissionOption]:
    """The options the client offers for ``question``."""
    match question:
        case ApprovalQuestion():
            return [
                PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
                PermissionOption(
                    option_id=ALLOW_ALWAYS,
                    name="Allow for this conversation",
                    kind="allow_always",
                ),
                PermissionOption(option_id=REJECT_ONCE, name="Decline", kind="reject_once"),
                PermissionOption(
                    option_id=REJECT_ALWAYS,
                    name="Decline for this session",
                    kind="reject_always",
                ),
            ]
        case ConfirmQuestion():
            return [
                PermissionOption(option_id=YES, name="Yes", kind="allow_once"),
                PermissionOption(option_id=NO, name="No", kind="reject_once"),
            ]
        case SelectQuestion(options=choices):
            return [
                PermissionOption(option_id=str(index), name=single_line(choice), kind="allow_once")
                for index, choice in enumerate(choices)
            ]


def answer_of(question: PermissionQuestion, response: RequestPermissionResponse) -> Answer:
    """The run's answer to ``question`` from the client's ``response``: a cancelled request,
    or an option this request did not offer, is no answer (the gate declines)."""
    outcome = response.outcome
    chosen = outcome.option_id if isinstance(outcome, AllowedOutcome) else None
    match question:
        case ApprovalQuestion():
            if chosen == ALLOW_ONCE:
                return ApprovalChoice.ONCE
            if chosen == ALLOW_ALWAYS:
                return ApprovalChoice.ALWAYS
            return ApprovalChoice.NO
        case ConfirmQuestion():
            return {YES: True, NO: False}.get(chosen or "")
        case SelectQuestion(options=choices):
            index = int(chosen) if chosen is not None and chosen.isdigit() else -1
            return index if 0 <= index < len(choices) else None


def rejects_always(response: RequestPermissionResponse) -> bool:
    outcome = response.outcome
    return isinstance(outcome, AllowedOutcome) and outcome.option_id == REJECT_ALWAYS


def was_cancelled(response: RequestPermissionResponse) -> bool:
    return isinstance(response.outcome, DeniedOutcome)


def input_notice(question: InputQuestion) -> str:
    """The agent message a free-text question becomes."""
    default = f" (default: {single_line(question.default)})" if question.default else ""
    return f"The agent asks: {single_line(question.question)}{default}\nAnswer in your next prompt."
