"""Session listings, summaries and transcripts as lines of text."""

from __future__ import annotations

from collections.abc import Sequence

from fisk_ai.agent.events import ToolCallEvent
from fisk_ai.agent.replay import call_arguments
from fisk_ai.lineui.lines import tool_call_line
from fisk_ai.llm.types import (
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from fisk_ai.sessions import Conversation, SessionSummary
from fisk_ai.util.sanitize import single_line, strip_control

PROMPT_IN_LISTING = 50
PROMPT_IN_SUMMARY = 200


def listing(summaries: Sequence[SessionSummary]) -> str:
    rows = [("ID", "MODEL", "STATUS", "UPDATED", "PROMPT")]
    for summary in sorted(summaries, key=lambda s: s.updated, reverse=True):
        rows.append(
            (
                summary.run_id,
                single_line(summary.model) or "-",
                summary.status.value,
                summary.updated.astimezone().strftime("%Y-%m-%d %H:%M:%S"),
                single_line(summary.first_prompt, PROMPT_IN_LISTING),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    return (
        "\n".join(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in rows
        )
        + "\n"
    )


def summary(conversation: Conversation) -> str:
    meta = conversation.meta
    usage = conversation.usage
    lines = [
        f"Session {conversation.run_id}",
        "",
        f"          Status: {conversation.status.value}",
        f"           Model: {single_line(meta.fingerprint.model) or '-'}",
        f"       Next iter: {conversation.next_iteration}",
        f"       LLM calls: {conversation.llm_calls}",
        f"      Tool calls: {conversation.tool_calls} (remote {conversation.remote_tool_calls})",
        f"          Tokens: {usage.input_tokens} in / {usage.output_tokens} out",
    ]
    if conversation.terminal is not None and conversation.terminal.message:
        lines.append(f"          Reason: {single_line(conversation.terminal.message)}")
    if conversation.pending:
        names = ", ".join(f"{call.name} ({call.id})" for call in conversation.pending)
        lines.append(f"         Pending: {single_line(names)}")
    if conversation.standing_grants:
        lines.append(f"Standing approval: {', '.join(sorted(conversation.standing_grants))}")
    for deferred in conversation.deferred:
        note = f": {single_line(deferred.note)}" if deferred.note else ""
        lines.append(f"      Waiting on: {deferred.tool_use_id} {deferred.tool_name}{note}")
    if meta.conversation_token:
        lines.append(f"    Conversation: {meta.conversation_token}")
    if meta.caller:
        lines.append(f"          Caller: {single_line(meta.caller)} (unverified)")
    lines += ["", "Prompt:", "", "  " + single_line(conversation.first_prompt, PROMPT_IN_SUMMARY)]
    return "\n".join(lines) + "\n"


def transcript(conversation: Conversation, *, thinking: bool) -> list[str]:
    """The conversation as lines: ``> prompt``, narration, ``-> call``, ``<- [id] result``."""
    messages = list(conversation.messages)
    if conversation.pending_turn is not None:
        messages.append(conversation.pending_turn)
    lines: list[str] = []
    for message in messages:
        lines += _message_lines(message, thinking=thinking)
    if conversation.answered:
        lines += _message_lines(Message(Role.USER, conversation.answered), thinking=thinking)
    return lines


def _message_lines(message: Message, *, thinking: bool) -> list[str]:
    lines: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            text = strip_control(block.text).strip()
            if not text:
                continue
            if message.role is Role.USER:
                lines.append("> " + text.replace("\n", "\n  "))
            else:
                lines.append(text)
        elif isinstance(block, ThinkingBlock):
            if thinking and block.text.strip():
                lines += ["[thinking]", strip_control(block.text).strip()]
        elif isinstance(block, ToolUseBlock):
            lines.append(tool_call_line(ToolCallEvent(block.id, block.name, call_arguments(block))))
        elif isinstance(block, ToolResultBlock):
            marker = " (error)" if block.is_error else ""
            content = strip_control(block.content).rstrip()
            lines.append(f"<- [{single_line(block.tool_use_id)}]{marker} {content}")
    return lines
