"""What the Slack channel writes in a thread: the status lines, the endings, the answer and its
cut, and the Block Kit around them.

Everything but the answer is plain text the channel wrote itself; the answer is the model's
markdown for Slack to render, and so is the part of it a status message shows while the model
is still writing it. Each status line opens with an emoji so a thread scrolled past
shows which turns worked before anybody reads the words, and no line names a session, a tool
call or an error a tool returned, since everybody in the channel reads the thread.
"""

from __future__ import annotations

import enum
from typing import Any

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
    Refusal,
    Suspended,
    TurnOutcome,
)

__all__ = [
    "ANSWER_LIMIT",
    "CARRIED_ON",
    "CUT_NOTE",
    "SETUP_CHANGED",
    "STOP_ACTION",
    "WRITING_LIMIT",
    "Phase",
    "answer_blocks",
    "cut_answer",
    "ending_line",
    "escape",
    "next_phase",
    "status_blocks",
    "writing_shown",
]

ANSWER_LIMIT = 12_000
"""Bytes of an answer posted; Slack's markdown block holds 12,000 characters."""
CUT_NOTE = "\n\n_The answer was cut here: it is longer than one Slack message can hold._"
STOP_ACTION = "stop"
WRITING_LIMIT = 3000
"""Characters of the answer being written that a status message shows: the newest of them."""
_ELIDED = "\u2026"


class Phase(enum.StrEnum):
    """The status message while a turn works."""

    QUEUED = ":hourglass_flowing_sand: Queued..."
    THINKING = ":thinking_face: Thinking..."
    CALLING_TOOLS = ":hammer: Calling tools..."
    SEARCHING_KNOWLEDGE = ":books: Searching knowledge..."
    WAITING = ":question: Waiting for your answer."
    STOPPING = ":stop_button: Stopping after this step..."


CARRIED_ON = ":arrow_down: The question was answered, and this turn carried on below."
"""The status of a turn that ended waiting for an answer, once the answer came."""
DRAINED_BEFORE_START = (
    ":zzz: This turn will not run: the bot is restarting. Mention me again in a few minutes."
)
STOPPED = ":stop_button: Stopped. Mention me to carry on from here."
DRAINED_WHILE_RUNNING = (
    ":pause_button: The bot is restarting, so this turn stopped here. Mention me to carry on."
)


_REFUSED = {
    Refusal.TURN_NOT_TAKEN: ":question: Answer the question above first, then mention me again.",
    Refusal.CONVERSATION_BUSY: (
        ":hourglass: Another worker is busy with this thread. Mention me again shortly."
    ),
    Refusal.REJECTED: ":no_entry: That request was turned down by this bot's rules.",
}
_NOT_CONTINUABLE = ":no_entry: This thread cannot be carried on. Start a new thread."
SETUP_CHANGED = (
    ":no_entry: This bot's model or instructions changed since this thread started, so the "
    "thread cannot be carried on. Start a new thread."
)
"""A follow-up that a changed model, system prompt, thinking mode or reasoning effort stopped;
a changed tool set stops none."""


def next_phase(shown: Phase | None, reached: Phase) -> Phase:
    """What the status shows once the run reaches ``reached``: a Stop acknowledged stays until
    the turn ends, since the step the run finishes first is no news to whoever pressed it."""
    return Phase.STOPPING if shown is Phase.STOPPING else reached


def ending_line(outcome: TurnOutcome, *, draining: bool = False) -> str:
    """The status message once a turn ended: how it ended, and where to carry on. The budget
    and the step cap read as parked rather than as faults."""
    match outcome:
        case Completed() | Declined():
            return ":white_check_mark: Answered."
        case IterationsSpent():
            return (
                ":parking: Parked: this turn took as many steps as it may. Mention me to carry on."
            )
        case BudgetSpent():
            return (
                ":parking: Parked: this conversation has used its token budget. Start a new "
                "thread to carry on."
            )
        case Suspended():
            return DRAINED_WHILE_RUNNING if draining else STOPPED
        case Deferred():
            return Phase.WAITING.value
        case Failed():
            return ":x: The model could not be reached, so this turn failed. Mention me to retry."
        case Crashed():
            return ":x: Something went wrong in this turn; the worker's log has the details."
        case Abandoned():
            return DRAINED_WHILE_RUNNING
        case NotRun():
            return _REFUSED.get(outcome.refusal, _NOT_CONTINUABLE)


def escape(text: str) -> str:
    """Text shown as written in a mrkdwn field: Slack's three control characters escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def cut_answer(answer: str, limit: int = ANSWER_LIMIT) -> tuple[str, bool]:
    """``answer`` cut to ``limit`` bytes of UTF-8, note included, on a character boundary;
    whether it was cut."""
    data = answer.encode()
    if len(data) <= limit:
        return answer, False
    room = limit - len(CUT_NOTE.encode())
    kept = data[:room].decode(errors="ignore")
    return kept + CUT_NOTE, True


def writing_shown(writing: str, limit: int = WRITING_LIMIT) -> str:
    """What a status message shows of an answer being written: all of it, or its newest
    ``limit`` characters after an ellipsis, from the start of a line when one begins in the
    first half of them, since the newest words are the ones being read."""
    if len(writing) <= limit:
        return writing
    tail = writing[len(writing) - limit + len(_ELIDED) :]
    line_end = tail.find("\n")
    if 0 <= line_end < len(tail) // 2:
        tail = tail[line_end + 1 :]
    return _ELIDED + tail


def answer_blocks(answer: str) -> list[dict[str, Any]]:
    return [{"type": "markdown", "text": answer}]


def status_blocks(
    line: str, *, turn: str, stoppable: bool, writing: str = ""
) -> list[dict[str, Any]]:
    """The status message: its line, what the model is writing (as ``writing_shown`` bounds
    it), and the Stop button while the turn runs."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "plain_text", "text": line, "emoji": True}}
    ]
    if writing.strip():
        blocks.append({"type": "markdown", "text": writing_shown(writing)})
    if stoppable:
        blocks.append(
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "action_id": STOP_ACTION,
                        "text": {"type": "plain_text", "text": "Stop"},
                        "value": turn,
                        "style": "danger",
                    }
                ],
            }
        )
    return blocks


def linked_blocks(line: str, permalink: str) -> list[dict[str, Any]]:
    """The status message of an answered turn: a link to the answer."""
    return [
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": f"<{permalink}|{escape(line)}>"},
        }
    ]
