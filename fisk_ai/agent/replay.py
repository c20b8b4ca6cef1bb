"""A stored conversation as the events a live run would have shown, for any surface to replay.

The journal keeps more than a reader is shown: thinking signatures, the fingerprint, the caller,
grants and the notes of deferred calls stay behind, and only the blocks of the conversation are
turned into events. Events are grouped by turn, a turn starting at each prompt, so a window over
the history can keep whole turns and never show a result without the call it answers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from fisk_ai.agent.events import (
    Event,
    PromptEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from fisk_ai.llm.types import (
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from fisk_ai.sessions.fold import Conversation

__all__ = [
    "ReplayWindow",
    "call_arguments",
    "conversation_events",
    "conversation_turns",
    "replay_window",
]


@dataclass(frozen=True)
class ReplayWindow:
    """The most recent blocks of a conversation; ``truncated`` says older ones were left out."""

    events: tuple[Event, ...]
    truncated: bool


def call_arguments(block: ToolUseBlock) -> dict[str, object]:
    """A call's arguments as an object; input that is not one is kept whole under ``input``."""
    try:
        decoded = json.loads(block.input or "{}")
    except ValueError:
        return {"input": block.input}
    return decoded if isinstance(decoded, dict) else {"input": decoded}


def conversation_turns(conversation: Conversation) -> list[list[Event]]:
    """The conversation's events in journal order (an unfinished turn included), one list per
    turn. Blocks before the first prompt, if any, form a turn of their own."""
    messages = list(conversation.messages)
    if conversation.pending_turn is not None:
        messages.append(conversation.pending_turn)
    if conversation.answered:
        messages.append(Message(Role.USER, conversation.answered))
    turns: list[list[Event]] = []
    for message in messages:
        for block in message.content:
            event = _event_of(message.role, block)
            if event is None:
                continue
            if isinstance(event, PromptEvent) or not turns:
                turns.append([])
            turns[-1].append(event)
    return turns


def conversation_events(conversation: Conversation) -> list[Event]:
    """The conversation's events in journal order, turns flattened."""
    return [event for turn in conversation_turns(conversation) for event in turn]


def replay_window(turns: Sequence[Sequence[Event]], wanted: int, cap: int) -> ReplayWindow:
    """The last ``wanted`` events, widened to whole turns but never past ``cap`` events.

    A turn too long to fit whole under the cap keeps its most recent events, less any result
    whose call was cut off.
    """
    wanted = min(wanted, cap)
    kept: list[Sequence[Event]] = []
    count = 0
    for turn in reversed(turns):
        if count >= wanted:
            break
        if count + len(turn) <= cap:
            kept.append(turn)
            count += len(turn)
            continue
        tail = _without_orphan_results(turn[len(turn) - (cap - count) :])
        if tail:
            kept.append(tail)
            count += len(tail)
        break
    events = tuple(event for turn in reversed(kept) for event in turn)
    total = sum(len(turn) for turn in turns)
    return ReplayWindow(events, truncated=len(events) < total)


def _without_orphan_results(events: Sequence[Event]) -> list[Event]:
    called = {event.id for event in events if isinstance(event, ToolCallEvent)}
    return [
        event
        for event in events
        if not (isinstance(event, ToolResultEvent) and event.call_id not in called)
    ]


def _event_of(role: Role, block: object) -> Event | None:
    if isinstance(block, TextBlock):
        text = block.text.strip()
        if not text:
            return None
        return PromptEvent(text) if role is Role.USER else TextEvent(text)
    if isinstance(block, ThinkingBlock):
        # The signature stays behind: it is the provider's, not the reader's.
        return ThinkingEvent(block.text) if block.text.strip() else None
    if isinstance(block, ToolUseBlock):
        return ToolCallEvent(block.id, block.name, call_arguments(block))
    if isinstance(block, ToolResultBlock):
        return ToolResultEvent(block.tool_use_id, block.content, block.is_error)
    return None
