"""The agent loop's events as a2a event messages, and back.

Each event kind of ``fisk_ai.agent.events`` travels as the block of one ``event.<kind>`` message.
A tool call's command line travels too, as the ``argv`` addition to the tool_call block, so a
surface on the far side of the protocol shows the same call line a local one would; a Go peer
drops it and shows the tool name. A result of a tool stopped at its time limit carries the
``timed_out`` addition the same way. An ``agent_call`` block, or an event kind this build does not
name, has no loop event and converts to None.

The pieces of an answer travel apart (``delta_message``, ``delta_from_message``): as events of
the ``text_delta`` and ``thinking_delta`` kinds, which the v1 set does not name, so they arrive
as ``UnknownEvent`` and ``event_from_message`` gives None for them; a caller that asked for them
reads them with ``delta_from_message``.
"""

from __future__ import annotations

from typing import assert_never

from fisk_ai.a2a.messages import (
    EventMessage,
    EventPrompt,
    EventStatus,
    EventText,
    EventThinking,
    EventToolCall,
    EventToolResult,
    EventWarning,
    ExecResult,
    PromptBody,
    ReplyHeader,
    StatusBody,
    TextBody,
    ThinkingBody,
    ToolCallBody,
    ToolResultBody,
    UnknownEvent,
    WarningBody,
    WireUsage,
)
from fisk_ai.a2a.vocabulary import EVENT_TEXT_DELTA, EVENT_THINKING_DELTA
from fisk_ai.agent.events import (
    DeltaEvent,
    Event,
    PromptEvent,
    StatusEvent,
    TextDeltaEvent,
    TextEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)

__all__ = ["delta_from_message", "delta_message", "event_from_message", "event_message"]


def event_message(event: Event, header: ReplyHeader) -> EventMessage:
    """The event message carrying ``event`` at the place in a reply set ``header`` frames."""
    match event:
        case TextEvent():
            return EventText(**header, block=TextBody(text=event.text, final=event.final))
        case ThinkingEvent():
            block = ThinkingBody(
                text=event.text, signature=event.signature, provider=event.provider
            )
            return EventThinking(**header, block=block)
        case ToolCallEvent():
            return EventToolCall(
                **header,
                block=ToolCallBody(
                    id=event.id, name=event.name, input=dict(event.input), argv=event.command
                ),
            )
        case ToolResultEvent():
            return EventToolResult(
                **header,
                block=ToolResultBody(
                    call_id=event.call_id,
                    is_error=event.is_error,
                    output=event.output,
                    exec=None if event.exec is None else ExecResult.from_record(event.exec),
                    timed_out=event.timed_out,
                ),
            )
        case StatusEvent():
            return EventStatus(
                **header,
                block=StatusBody(
                    iteration=event.iteration,
                    phase=event.phase,
                    usage=None if event.usage is None else WireUsage.from_usage(event.usage),
                    count=event.count,
                    truncated=event.truncated,
                    attempt=event.attempt,
                    attempts=event.attempts,
                    wait_ms=round(event.wait_seconds * 1000),
                ),
            )
        case WarningEvent():
            return EventWarning(
                **header,
                block=WarningBody(
                    kind=event.kind,
                    name=event.name,
                    count=event.count,
                    params=event.params,
                    error=event.error,
                ),
            )
        case PromptEvent():
            return EventPrompt(**header, block=PromptBody(text=event.text))
        case _:
            assert_never(event)


def event_from_message(message: EventMessage | UnknownEvent) -> Event | None:
    """The loop event an event message carries, or None for a kind the loop never emits."""
    match message:
        case EventText(block=block):
            return TextEvent(block.text, final=block.final)
        case EventThinking(block=block):
            return ThinkingEvent(block.text, signature=block.signature, provider=block.provider)
        case EventToolCall(block=block):
            return ToolCallEvent(block.id, block.name, dict(block.input), command=block.argv)
        case EventToolResult(block=block):
            return ToolResultEvent(
                block.call_id,
                block.output,
                is_error=block.is_error,
                exec=None if block.exec is None else block.exec.to_record(),
                timed_out=block.timed_out,
            )
        case EventStatus(block=block):
            return StatusEvent(
                iteration=block.iteration,
                phase=block.phase,
                usage=None if block.usage is None else block.usage.to_usage(),
                count=block.count,
                truncated=block.truncated,
                attempt=block.attempt,
                attempts=block.attempts,
                wait_seconds=block.wait_ms / 1000,
            )
        case EventWarning(block=block):
            return WarningEvent(
                block.kind,
                name=block.name,
                count=block.count,
                params=block.params,
                error=block.error,
            )
        case EventPrompt(block=block):
            return PromptEvent(block.text)
        case _:
            return None


def delta_message(event: DeltaEvent, header: ReplyHeader) -> UnknownEvent:
    """The event message carrying a piece of an answer at the place ``header`` frames."""
    match event:
        case TextDeltaEvent():
            protocol = EVENT_TEXT_DELTA
        case ThinkingDeltaEvent():
            protocol = EVENT_THINKING_DELTA
        case _:
            assert_never(event)
    return UnknownEvent(**header, protocol=protocol, block={"text": event.text})


def delta_from_message(message: EventMessage | UnknownEvent) -> DeltaEvent | None:
    """The piece of an answer a message carries, or None for any other message."""
    if not isinstance(message, UnknownEvent):
        return None
    text = message.block.get("text")
    if not isinstance(text, str):
        return None
    if message.protocol == EVENT_TEXT_DELTA:
        return TextDeltaEvent(text)
    if message.protocol == EVENT_THINKING_DELTA:
        return ThinkingDeltaEvent(text)
    return None
