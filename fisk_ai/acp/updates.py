"""Loop events as ACP session updates, and how a turn ended as an ACP stop reason.

A tool call's title is its argument vector, each word quoted as a shell would need it typed;
its kind comes from the tool's behaviour tags. The answer arrives as chunks while it is
written; a model call that streamed nothing sends its whole text once it is complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from fisk_ai.agent.events import (
    DeltaEvent,
    Event,
    PromptEvent,
    TextDeltaEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
)
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
    Suspended,
    TurnOutcome,
)
from fisk_ai.tools.base import BehaviorDescriber, ShowsCommand
from fisk_ai.tools.questions import shell_word
from fisk_ai.util.sanitize import strip_control

if TYPE_CHECKING:
    from acp.schema import StopReason, ToolKind

    from fisk_ai.tools.toolset import ToolSet

__all__ = [
    "SessionUpdate",
    "TurnEnd",
    "UpdateWriter",
    "tool_kind",
    "tool_title",
    "turn_end",
]

SessionUpdate = (
    AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress | UserMessageChunk
)


def tool_kind(tools: ToolSet, name: str) -> ToolKind:
    """The ACP kind of a call to tool ``name``: read, edit or delete from its behaviour tags,
    execute for a command that says nothing of its effect (it may do anything), other for a
    tool that runs no command and describes nothing."""
    tool = tools.get(name)
    if tool is None:
        return "other"
    if isinstance(tool, BehaviorDescriber):
        behavior = tool.behavior()
        if behavior.destructive:
            return "delete"
        if behavior.additive:
            return "edit"
        if behavior.read_only:
            return "read"
    return "execute" if isinstance(tool, ShowsCommand) else "other"


def tool_title(name: str, argv: tuple[str, ...]) -> str:
    """The title of a call: its argument vector as a shell would need it typed, or the tool's
    name for a tool that runs no command."""
    if not argv:
        return strip_control(name)
    return " ".join(shell_word(argument) for argument in argv)


@dataclass(frozen=True)
class TurnEnd:
    """How a turn ended, in ACP's words: the stop reason, and the sentence to show the user
    when the reason alone does not say it (a run waiting on a call, a question nobody
    answered); ``error`` when the turn failed and the prompt request answers with an error."""

    stop_reason: StopReason
    notice: str = ""
    error: str = ""


def turn_end(outcome: TurnOutcome, *, cancelled: bool) -> TurnEnd:
    """The ACP ending of ``outcome``; ``cancelled`` when the client cancelled the turn."""
    match outcome:
        case Completed():
            return TurnEnd("end_turn")
        case Declined():
            return TurnEnd("refusal")
        case IterationsSpent(message):
            return TurnEnd("max_turn_requests", notice=message)
        case BudgetSpent(message):
            return TurnEnd("max_tokens", notice=message)
        case Suspended(message):
            return TurnEnd("cancelled") if cancelled else TurnEnd("end_turn", notice=message)
        case Deferred(message):
            return TurnEnd("end_turn", notice=message)
        case Failed(message) | Crashed(message) | Abandoned(message):
            return TurnEnd("end_turn", error=message or "the turn crashed; see the agent's log")
        case NotRun(message=message):
            return TurnEnd("end_turn", error=message)


class UpdateWriter:
    """The session updates of one ACP session's events, built in the order the events come.

    Deltas become chunks as they arrive; the complete text block that follows a streamed
    model call is then left out, since the client already has it.
    """

    def __init__(self, tools: ToolSet) -> None:
        self._tools = tools
        self._streamed_text = False
        self._streamed_thinking = False
        self.last_tool_call = ""
        """The id of the tool call announced last (tools run one at a time)."""
        self._declined: set[str] = set()

    def declined(self, call_id: str) -> None:
        """Call ``call_id`` was declined: its result is a failure, not a completion."""
        self._declined.add(call_id)

    def delta(self, event: DeltaEvent) -> SessionUpdate | None:
        if not event.text:
            return None
        if isinstance(event, TextDeltaEvent):
            self._streamed_text = True
            return update_agent_message_text(event.text)
        self._streamed_thinking = True
        return update_agent_thought_text(event.text)

    def event(self, event: Event) -> SessionUpdate | None:
        match event:
            case TextEvent(text=text):
                streamed, self._streamed_text = self._streamed_text, False
                return None if streamed or not text else update_agent_message_text(text)
            case ThinkingEvent(text=text):
                streamed, self._streamed_thinking = self._streamed_thinking, False
                return None if streamed or not text else update_agent_thought_text(text)
            case ToolCallEvent():
                self.last_tool_call = event.id
                return start_tool_call(
                    event.id,
                    tool_title(event.name, event.command),
                    kind=tool_kind(self._tools, event.name),
                    status="in_progress",
                    raw_input=_plain(event.input),
                )
            case ToolResultEvent():
                return update_tool_call(
                    event.call_id,
                    status="failed" if self._failed(event) else "completed",
                    content=[tool_content(text_block(strip_control(event.output)))],
                    raw_output=_raw_output(event),
                )
            case PromptEvent(text=text):
                return update_user_message_text(text)
            case _:
                return None

    def _failed(self, result: ToolResultEvent) -> bool:
        exited_badly = result.exec is not None and result.exec.exit_code != 0
        declined = result.call_id in self._declined
        return result.is_error or result.timed_out or exited_badly or declined


def _raw_output(result: ToolResultEvent) -> dict[str, Any]:
    raw: dict[str, Any] = {"output": result.output}
    if result.exec is not None:
        raw["exit_code"] = result.exec.exit_code
        raw["truncated"] = result.exec.truncated
    if result.timed_out:
        raw["timed_out"] = True
    return raw


def _plain(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return dict(arguments)
