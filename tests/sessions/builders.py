"""Small constructors for journals in tests: a meta record, turns, results, numbered records."""

from __future__ import annotations

from datetime import UTC, datetime

from fisk_ai.llm.types import Message, Role, TextBlock, ToolResultBlock, ToolUseBlock
from fisk_ai.sessions import Assistant, Fingerprint, Meta, Payload, Record, ToolResult

CREATED = datetime(2025, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)


def fingerprint(**changes: object) -> Fingerprint:
    values: dict[str, object] = {
        "provider": "anthropic",
        "model": "claude-sonnet",
        "system_hash": "a" * 64,
        "tools_hash": "b" * 64,
        "thinking_mode": "unset",
        "max_tokens": 500000,
        "max_iterations": 50,
    }
    values.update(changes)
    return Fingerprint(**values)  # type: ignore[arg-type]


def meta(run_id: str = "run-1", prompt: str = "report on the ORDERS stream", **kw: object) -> Meta:
    return Meta(run_id, CREATED, fingerprint(), prompt, **kw)  # type: ignore[arg-type]


def turn(iteration: int, *call_ids: str, text: str = "", tokens: int = 10) -> Assistant:
    """An assistant turn making one call per id (tool name ``tool_<id>``)."""
    blocks: list[TextBlock | ToolUseBlock] = [TextBlock(text or f"turn {iteration}")]
    blocks += [ToolUseBlock(call_id, f"tool_{call_id}", "{}") for call_id in call_ids]
    return Assistant(iteration, Message(Role.ASSISTANT, tuple(blocks)), tokens, tokens // 2)


def result(call_id: str, content: str = "", *, remote: bool = False) -> ToolResult:
    return ToolResult(ToolResultBlock(call_id, content or f"output of {call_id}"), remote=remote)


def journal(*payloads: Payload, first: Meta | None = None) -> list[Record]:
    """A meta record (seq 1) followed by the payloads, numbered in order."""
    return [
        Record(seq, payload) for seq, payload in enumerate((first or meta(), *payloads), start=1)
    ]
