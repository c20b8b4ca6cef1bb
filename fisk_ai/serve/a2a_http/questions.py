"""A run's questions as an A2A caller reads them, and its next message read back as the answer.

A2A has no typed question: a task waiting on its caller is ``input-required`` with a message,
and the caller answers with a message of its own. So each question is put in words that say
what an answer looks like, and the answer is read from the text of the next message. An
approval is read strictly, failing closed: only ``once`` (or ``yes``) and ``always`` run the
command; anything else declines it, and words other than a plain ``no`` reach the model as the
caller's reason.
"""

from __future__ import annotations

from fisk_ai.tools.questions import (
    Answer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    DeclineWithReason,
    InputQuestion,
    Question,
    SelectQuestion,
)

__all__ = ["answer_from_text", "question_text"]

_APPROVALS = {
    "once": ApprovalChoice.ONCE,
    "yes": ApprovalChoice.ONCE,
    "y": ApprovalChoice.ONCE,
    "always": ApprovalChoice.ALWAYS,
}
_DECLINES = frozenset({"no", "n"})
_YES = frozenset({"yes", "y", "true"})
_NO = frozenset({"no", "n", "false"})


def question_text(question: Question) -> str:
    """The words of the input-required message that puts ``question`` to the caller."""
    match question:
        case ApprovalQuestion():
            command = " ".join(question.shell_words())
            trigger = f" (gated by {question.trigger})" if question.trigger else ""
            return (
                f"Approve running {command}{trigger}? Answer once, always (which would "
                f"{question.always_covers()}), or no, optionally followed by a reason."
            )
        case ConfirmQuestion():
            return f"{question.question} Answer yes or no."
        case SelectQuestion():
            options = "\n".join(
                f"{number}. {option}" for number, option in enumerate(question.options, 1)
            )
            return f"{question.question} Answer with one option or its number:\n{options}"
        case InputQuestion():
            default = f' (the default is "{question.default}")' if question.default else ""
            return f"{question.question}{default}"


def answer_from_text(question: Question, text: str) -> Answer:
    """The answer the caller's ``text`` gives ``question``; None when it gives none."""
    words = text.strip()
    folded = words.lower()
    match question:
        case ApprovalQuestion():
            first, _, rest = folded.partition(" ")
            if folded in _APPROVALS:
                return _APPROVALS[folded]
            if folded in _DECLINES or not words:
                return ApprovalChoice.NO
            if first.rstrip(",.:;") in _DECLINES:
                return DeclineWithReason(words[len(first) :].strip(" ,.:;") or rest)
            return DeclineWithReason(words)
        case ConfirmQuestion():
            if folded in _YES:
                return True
            if folded in _NO:
                return False
            return None
        case SelectQuestion():
            if folded.isdigit() and 1 <= int(folded) <= len(question.options):
                return int(folded) - 1
            for index, option in enumerate(question.options):
                if option.strip().lower() == folded:
                    return index
            return None
        case InputQuestion():
            return text if words else (question.default or None)
