"""A stored conversation as the events a live run would have shown, for any surface to replay.

Each event is rebuilt as the agent loop built it the first time: per model turn the thinking,
then the turn's text in one block (marked final when it answered the prompt), then each call
followed by its result. A command's result gets back its exec record and plain output from the
CommandResult envelope the journal holds. A call's argument vector is not journaled; it comes
from the tool set when the caller passes one, since it depends on how the tool is configured,
and otherwise from the command line its result records, when it ran one.

The journal keeps more than a reader is shown: thinking signatures, the fingerprint, the caller,
grants and the notes of deferred calls stay behind. Events are grouped by turn, a turn starting at
each prompt, so a window over the history can keep whole turns and never show a result without
the call it answers.

How the last turn ended is told apart from the events (``last_turn_ending``): the journal keeps
only the latest terminal record, so earlier turns' endings are not there to replay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

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
    answers_the_prompt,
)
from fisk_ai.sessions.fold import Conversation
from fisk_ai.sessions.records import Terminal, TerminalReason
from fisk_ai.tools.base import ExecRecord, Outcome
from fisk_ai.tools.prepared import readable_arguments, shown_argv
from fisk_ai.util import jsonx

if TYPE_CHECKING:
    from fisk_ai.tools.toolset import ToolSet

__all__ = [
    "ReplayWindow",
    "call_arguments",
    "conversation_events",
    "conversation_turns",
    "last_turn_ending",
    "last_turn_over",
    "replay_window",
    "result_outcome",
    "stopped_at_the_iteration_cap",
]

_ENVELOPE_KEYS = frozenset({"command", "exit_code", "output"})
_ENVELOPE_FIELDS = _ENVELOPE_KEYS | {"truncated"}


@dataclass(frozen=True)
class ReplayWindow:
    """The most recent blocks of a conversation; ``truncated`` says older ones were left out."""

    events: tuple[Event, ...]
    truncated: bool


def call_arguments(block: ToolUseBlock) -> dict[str, object]:
    """A call's arguments as an object; input that is not one is kept whole under ``input``."""
    try:
        decoded = _stored_json(block.input or "{}")
    except jsonx.JsonError:
        return {"input": block.input}
    return decoded if isinstance(decoded, dict) else {"input": decoded}


def result_outcome(block: ToolResultBlock) -> Outcome:
    """The outcome a journaled result was made from. A command's CommandResult envelope becomes
    its output and exec record again; any other content is the output as it stands. Content is
    taken for an envelope only when it is exactly what the loop would have written for one, so
    a tool whose own output merely looks like an envelope keeps it."""
    plain = Outcome(block.content, block.is_error)
    try:
        decoded = _stored_json(block.content)
    except jsonx.JsonError:
        return plain
    if not isinstance(decoded, dict) or not _ENVELOPE_KEYS <= set(decoded) <= _ENVELOPE_FIELDS:
        return plain
    command, exit_code, output = decoded["command"], decoded["exit_code"], decoded["output"]
    truncated = decoded.get("truncated", False)
    if not (
        isinstance(command, str)
        and isinstance(exit_code, int)
        and not isinstance(exit_code, bool)
        and isinstance(output, str)
        and isinstance(truncated, bool)
    ):
        return plain
    rebuilt = Outcome(output, block.is_error, ExecRecord(command, exit_code, truncated))
    return rebuilt if rebuilt.model_content == block.content else plain


def conversation_turns(
    conversation: Conversation, tools: ToolSet | None = None
) -> list[list[Event]]:
    """The conversation's events in journal order (an unfinished turn included), one list per
    turn. Blocks before the first prompt, if any, form a turn of their own. ``tools`` supplies
    each call's argument vector; without it, calls carry none."""
    messages = list(conversation.messages)
    if conversation.pending_turn is not None:
        messages.append(conversation.pending_turn)
    if conversation.answered:
        messages.append(Message(Role.USER, conversation.answered))
    turns: list[list[Event]] = []
    shown: set[str] = set()
    stop_reasons = iter(conversation.stop_reasons)
    for index, message in enumerate(messages):
        following = messages[index + 1] if index + 1 < len(messages) else None
        if message.role is Role.ASSISTANT:
            final = answers_the_prompt(message, next(stop_reasons, ""))
            events = _model_turn_events(message, following, final, tools)
            shown.update(event.call_id for event in events if isinstance(event, ToolResultEvent))
        else:
            events = _user_events(message, shown)
        for event in events:
            if isinstance(event, PromptEvent) or not turns:
                turns.append([])
            turns[-1].append(event)
    return turns


def conversation_events(conversation: Conversation, tools: ToolSet | None = None) -> list[Event]:
    """The conversation's events in journal order, turns flattened."""
    return [event for turn in conversation_turns(conversation, tools) for event in turn]


def last_turn_ending(conversation: Conversation) -> Terminal | None:
    """How the conversation's last turn ended, when a reader is owed a line about it as the
    live run gave one: the journal's terminal record, unless it says only that the turn was
    answered (completed, or a chat resting between turns after its answer)."""
    terminal = conversation.terminal
    if terminal is None or terminal.reason is TerminalReason.COMPLETED:
        return None
    if (
        terminal.reason is TerminalReason.SUSPENDED
        and not terminal.message
        and conversation.between_turns
    ):
        return None
    return terminal


def last_turn_over(conversation: Conversation) -> bool:
    """Whether the conversation's last turn is over, answered or stopped at the iteration cap,
    so that a resume has nothing to carry on and only another prompt continues it. A turn the
    model paused (stop reason pause_turn) is not over."""
    if stopped_at_the_iteration_cap(conversation):
        return True
    messages = conversation.messages
    if conversation.pending_turn is not None or conversation.deferred or not messages:
        return False
    last = messages[-1]
    paused = bool(conversation.stop_reasons) and conversation.stop_reasons[-1] == "pause_turn"
    return (
        last.role is Role.ASSISTANT
        and not paused
        and not any(isinstance(block, ToolUseBlock) for block in last.content)
    )


def stopped_at_the_iteration_cap(conversation: Conversation) -> bool:
    """Whether the conversation's last turn ended by using every iteration it was allowed,
    with nothing left to run: a resume has nothing to carry on, and the conversation goes on
    only with another prompt. A run that ended at the cap journals it; an interactive one left
    after the cap rests suspended, its last turn having made as many model calls as the
    fingerprint's max_iterations."""
    terminal = conversation.terminal
    if (
        terminal is None
        or conversation.pending_turn is not None
        or conversation.deferred
        or not conversation.messages
        or conversation.messages[-1].role is not Role.USER
    ):
        return False
    if terminal.reason is TerminalReason.MAX_ITERATIONS:
        return True
    allowed = conversation.meta.fingerprint.max_iterations
    return (
        terminal.reason is TerminalReason.SUSPENDED
        and allowed > 0
        and _model_calls_of_last_turn(conversation.messages) >= allowed
    )


def _model_calls_of_last_turn(messages: Sequence[Message]) -> int:
    """The assistant messages since the last prompt (a user message with text in it)."""
    calls = 0
    for message in reversed(messages):
        if message.role is Role.ASSISTANT:
            calls += 1
        elif any(isinstance(block, TextBlock) for block in message.content):
            break
    return calls


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


def _model_turn_events(
    message: Message, following: Message | None, final: bool, tools: ToolSet | None
) -> list[Event]:
    # The signature stays behind: it is the provider's, not the reader's, and the provider
    # named beside it would mean nothing without it.
    events: list[Event] = [
        ThinkingEvent(block.text) for block in message.content if isinstance(block, ThinkingBlock)
    ]
    if message.text:
        events.append(TextEvent(message.text, final=final))
    results: dict[str, ToolResultBlock] = {}
    if following is not None and following.role is Role.USER:
        results = {
            block.tool_use_id: block
            for block in following.content
            if isinstance(block, ToolResultBlock)
        }
    for call in message.tool_uses:
        # Decoded as the loop decodes them, so numbers keep their literal form and input that
        # is not an object shows as no arguments, as it did live.
        arguments = readable_arguments(call.name, call.input)
        tool = tools.get(call.name) if tools is not None else None
        answer = results.get(call.id)
        result = _result_event(answer) if answer is not None else None
        command = shown_argv(tool, arguments)
        if tool is None and result is not None and result.exec is not None:
            # Without the tool set, the command line the call ran is still in its result.
            command = tuple(result.exec.command.split())
        events.append(ToolCallEvent(call.id, call.name, arguments, command))
        if result is not None:
            events.append(result)
    return events


def _user_events(message: Message, shown: set[str]) -> list[Event]:
    events: list[Event] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text.strip():
            events.append(PromptEvent(block.text.strip()))
        elif isinstance(block, ToolResultBlock) and block.tool_use_id not in shown:
            events.append(_result_event(block))
    return events


def _result_event(block: ToolResultBlock) -> ToolResultEvent:
    outcome = result_outcome(block)
    return ToolResultEvent(block.tool_use_id, outcome.output, outcome.is_error, outcome.exec)


def _stored_json(text: str) -> object:
    return jsonx.parse(text, surrogates=jsonx.Surrogates.KEEP, refuse_constants=False)
