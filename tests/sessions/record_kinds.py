"""One payload of every session record kind."""

from __future__ import annotations

from datetime import UTC, datetime

from fisk_ai.llm.types import (
    Message,
    ProviderBlock,
    ResultImage,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from fisk_ai.sessions import (
    Assistant,
    CallApproval,
    Claim,
    Decision,
    Deferred,
    MemoryRevisions,
    Meta,
    Payload,
    Terminal,
    TerminalReason,
    ToolResult,
    User,
)
from tests.sessions.builders import CREATED, fingerprint

ASSISTANT_MESSAGE = Message(
    Role.ASSISTANT,
    (
        ThinkingBlock("the stream name is in the prompt", b"\x01\x02sig"),
        TextBlock("Looking at ORDERS."),
        ToolUseBlock("toolu_1", "stream_info", '{"stream": "ORDERS"}'),
        ProviderBlock("server_tool_use", '{"id": "srv_1", "name": "tool_search"}'),
    ),
)

EVERY_KIND: list[Payload] = [
    Meta(
        "run-1",
        CREATED,
        fingerprint(reasoning_effort="high"),
        prompt="report on ORDERS",
        interactive=True,
        conversation_token="tok",
        caller="alice",
    ),
    Assistant(
        3,
        ASSISTANT_MESSAGE,
        in_tokens=120,
        out_tokens=40,
        stop_reason="tool_use",
        cache_read_tokens=7,
        cache_create_tokens=9,
        thinking_tokens=11,
    ),
    User(Message(Role.USER, (TextBlock("and the KV buckets?"),))),
    ToolResult(ToolResultBlock("toolu_1", "3 messages", is_error=True), remote=True),
    ToolResult(ToolResultBlock("toolu_4", "[image 1]", images=(ResultImage("image/png", "iVBO"),))),
    Deferred("toolu_2", "approve_change", note="waiting for CAB", handle="CHG-7"),
    Decision("stream_rm"),
    CallApproval("toolu_3", "stream_rm"),
    MemoryRevisions({"orders.owner": 4, "orders.sla": 1}),
    Terminal(TerminalReason.MAX_ITERATIONS, "hit 50 iterations"),
    Claim("worker-2", datetime(2025, 3, 4, 5, 6, 8, tzinfo=UTC)),
]
