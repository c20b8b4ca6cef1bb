"""Session listings, summaries and transcripts as lines of text."""

from __future__ import annotations

from typing import assert_never

from fisk_ai.agent.events import (
    PromptEvent,
    StatusEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from fisk_ai.agent.replay import conversation_events
from fisk_ai.presentation import (
    session_state,
    stored_ending_lines,
    thinking_lines,
    tool_call_line,
    tool_result_text,
    warning_text,
)
from fisk_ai.sessions import Conversation
from fisk_ai.util.sanitize import single_line, strip_control

PROMPT_IN_SUMMARY = 200


def summary(conversation: Conversation) -> str:
    meta = conversation.meta
    usage = conversation.usage
    lines = [
        f"Session {single_line(conversation.run_id)}",
        "",
        # Status is the journal's reason, as the Go version prints it for scripts; State is the
        # word the browser, the viewer and the ls listing use.
        f"          Status: {conversation.status.value}",
        f"           State: {session_state(conversation).value}",
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
        grants = ", ".join(sorted(conversation.standing_grants))
        lines.append(f"Standing approval: {single_line(grants)}")
    for deferred in conversation.deferred:
        note = f": {single_line(deferred.note)}" if deferred.note else ""
        waiting = single_line(f"{deferred.tool_use_id} {deferred.tool_name}")
        lines.append(f"      Waiting on: {waiting}{note}")
    if meta.conversation_token:
        lines.append(f"    Conversation: {single_line(meta.conversation_token)}")
    if meta.caller:
        lines.append(f"          Caller: {single_line(meta.caller)} (unverified)")
    lines += ["", "Prompt:", "", "  " + single_line(conversation.first_prompt, PROMPT_IN_SUMMARY)]
    return "\n".join(lines) + "\n"


def transcript(conversation: Conversation, *, thinking: bool) -> list[str]:
    """The conversation as lines: ``> prompt``, narration, ``-> call``, ``<- [id] result``, each
    drawn as the live line surface draws it, from the events the run showed."""
    lines: list[str] = []
    for event in conversation_events(conversation):
        match event:
            case PromptEvent():
                lines.append("> " + strip_control(event.text).strip().replace("\n", "\n  "))
            case TextEvent():
                text = strip_control(event.text).strip()
                if text:
                    lines.append(text)
            case ThinkingEvent():
                if thinking:
                    lines += thinking_lines(event.text)
            case ToolCallEvent():
                lines.append(tool_call_line(event))
            case ToolResultEvent():
                result = tool_result_text(event).rstrip()
                lines.append(f"<- [{single_line(event.call_id)}] {result}")
            case WarningEvent():
                lines.append(f"warning: {warning_text(event)}")
            case StatusEvent():
                pass
            case _:
                assert_never(event)
    return lines + stored_ending_lines(conversation)
