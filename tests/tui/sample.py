"""A scripted conversation the workstation tests render."""

from __future__ import annotations

from fisk_ai.agent.events import (
    Event,
    PromptEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from fisk_ai.tools.base import ExecRecord


def conversation() -> list[Event]:
    """A short turn: a prompt, thinking, a command with output, an error, an answer."""
    return [
        PromptEvent("list the streams"),
        ThinkingEvent("\n".join(f"step {n} of the plan" for n in range(1, 8))),
        TextEvent("Looking at the streams now."),
        ToolCallEvent("c1", "stream_ls", {"json": True, "all": False}, ("stream", "ls", "--all")),
        ToolResultEvent("c1", "ORDERS\nINVOICES\nSHIPPING", exec=ExecRecord("stream ls", 0)),
        ToolCallEvent("c2", "stream_info", {"name": "NOPE"}, ("stream", "info", "NOPE")),
        ToolResultEvent("c2", "stream not found", is_error=True),
        TextEvent("There are three streams: ORDERS, INVOICES and SHIPPING.", final=True),
    ]


def long_output(count: int) -> ToolResultEvent:
    return ToolResultEvent(
        "long", "\n".join(f"row {n}" for n in range(count)), exec=ExecRecord("x", 0)
    )
