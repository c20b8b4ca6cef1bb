"""Content capture documents in the shapes the GenAI semantic conventions define.

A model call's messages arrive in the session journal's JSON encoding (``llm.codec``: a message
is ``{"role", "content": [{kind: body}]}``), since that is the primitive form the loop already
has; they leave as the conventions' ``{"role", "parts": [{"type": ...}]}`` documents that GenAI
backends render. Stdlib only, like the rest of the facade.

Every document fits ``max_bytes`` (0 means no cap) measured on the encoded JSON, escapes
included, and always parses: whole messages are dropped oldest first, then text is shortened
with a marker naming the original size and the key to raise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Document",
    "messages_document",
    "system_instructions_document",
    "value_document",
]

PART_TEXT = "text"
PART_REASONING = "reasoning"
PART_TOOL_CALL = "tool_call"
PART_TOOL_CALL_RESPONSE = "tool_call_response"
# Not a convention part type: a provider block the neutral model keeps without reading. The
# part stays so a reader sees the turn had something there; its payload never leaves.
PART_PROVIDER_BLOCK = "provider_block"
ROLE_TOOL = "tool"
# Below this a shortened payload is all marker and no content; the bare marker says it better.
MIN_PAYLOAD_BYTES = 32
PAYLOAD_KEYS = ("content", "arguments", "response")

Part = dict[str, Any]
Message = dict[str, Any]


@dataclass(frozen=True)
class Document:
    """One rendered content attribute. ``text`` is empty when no document fits the budget."""

    text: str
    truncated: bool = False
    dropped_messages: int = 0


def _encode(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _cost(text: str) -> int:
    return len(text.encode("utf-8"))


def _string_cost(text: str) -> int:
    """Bytes ``text`` takes inside a JSON string, its escapes counted and its quotes not."""
    return _cost(_encode(text)) - 2


def _marker(original_bytes: int) -> str:
    if original_bytes:
        return (
            f"...[fisk-ai cut this from {original_bytes} bytes; raise telemetry.capture.max_bytes]"
        )
    return "[fisk-ai cut this; raise telemetry.capture.max_bytes]"


def _prefix_within(text: str, budget: int) -> str:
    """The longest prefix of ``text`` whose encoded cost is at most ``budget``."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if _string_cost(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def _shortened(text: str, budget: int) -> str:
    """``text`` cut to ``budget`` encoded bytes, ending in the marker when there is room."""
    if _string_cost(text) <= budget:
        return text
    marker = _marker(_cost(text))
    room = budget - _string_cost(marker)
    if room < MIN_PAYLOAD_BYTES:
        return _prefix_within(text, budget)
    return _prefix_within(text, room) + marker


def _decoded(text: str) -> object:
    """A serialized value as the JSON it holds, else the text itself: the conventions ask for
    the structure where there is one."""
    try:
        value: object = json.loads(text)
    except ValueError:
        return text
    return value


def _parts(blocks: Sequence[Mapping[str, Any]]) -> list[Part]:
    parts: list[Part] = []
    for block in blocks:
        if not isinstance(block, Mapping) or len(block) != 1:
            continue
        kind, body = next(iter(block.items()))
        if not isinstance(body, Mapping):
            continue
        if kind == "text":
            if body.get("text"):
                parts.append({"type": PART_TEXT, "content": str(body["text"])})
        elif kind == "thinking":
            # The signature is opaque provider bytes and never leaves the process; redacted
            # reasoning (no text) stays as a marked part, since that the model reasoned here
            # is itself worth knowing.
            text = str(body.get("text", ""))
            parts.append(
                {"type": PART_REASONING, "content": text}
                if text
                else {"type": PART_REASONING, "omitted": True}
            )
        elif kind == "tool_use":
            parts.append(
                {
                    "type": PART_TOOL_CALL,
                    "id": str(body.get("id", "")),
                    "name": str(body.get("name", "")),
                    "arguments": body.get("input", {}),
                }
            )
        elif kind == "tool_result":
            parts.append(
                {
                    "type": PART_TOOL_CALL_RESPONSE,
                    "id": str(body.get("tool_use_id", "")),
                    "response": _decoded(str(body.get("content", ""))),
                }
            )
        elif kind == "provider":
            parts.append(
                {"type": PART_PROVIDER_BLOCK, "kind": str(body.get("kind", "")), "omitted": True}
            )
    return parts


def _answers_only(parts: Sequence[Part]) -> bool:
    return bool(parts) and all(part["type"] == PART_TOOL_CALL_RESPONSE for part in parts)


def semconv_message(message: Mapping[str, Any], finish_reason: str = "") -> Message:
    """One journal-encoded message in the conventions' shape. A message of tool results only
    takes the conventions' ``tool`` role; the journal batches them into a user message."""
    parts = _parts(message.get("content", ()))
    role = ROLE_TOOL if _answers_only(parts) else str(message.get("role", ""))
    rendered: Message = {"role": role, "parts": parts}
    if finish_reason:
        rendered["finish_reason"] = finish_reason
    return rendered


def _fit_parts(parts: Sequence[Part], budget: int) -> list[Part] | None:
    """``parts`` with their payloads shortened evenly so the array costs at most ``budget``;
    None when there is not room enough for any of them."""
    if budget <= 0 or not parts:
        return None
    skeleton = [
        {key: ("" if key in PAYLOAD_KEYS else value) for key, value in p.items()} for p in parts
    ]
    payloads = sum(1 for p in parts for key in PAYLOAD_KEYS if key in p)
    if payloads == 0:
        return list(parts) if _cost(_encode(list(parts))) <= budget else None
    share = (budget - _cost(_encode(skeleton))) // payloads
    if share < MIN_PAYLOAD_BYTES:
        return None
    fitted: list[Part] = []
    for part in parts:
        shortened = dict(part)
        for key in PAYLOAD_KEYS:
            if key not in part:
                continue
            value = part[key]
            text = value if isinstance(value, str) else _encode(value)
            cost = _string_cost(text) if isinstance(value, str) else _cost(text)
            if cost > share:
                shortened[key] = _shortened(text, share)
        fitted.append(shortened)
    return fitted if _cost(_encode(fitted)) <= budget else None


def _fit_message(message: Message, budget: int) -> str:
    """``message`` encoded within ``budget`` bytes, its payloads shortened; else the bare
    marker as its only part; empty when not even that fits."""
    overhead = _cost(_encode({**message, "parts": []}))
    parts = _fit_parts(message["parts"], budget - overhead + 2)
    if parts is not None:
        text = _encode({**message, "parts": parts})
        if _cost(text) <= budget:
            return text
    fallback = _encode(
        {"role": message["role"], "parts": [{"type": PART_TEXT, "content": _marker(0)}]}
    )
    return fallback if _cost(fallback) <= budget else ""


def messages_document(
    journal_messages: str, *, finish_reason: str = "", max_bytes: int = 0
) -> Document:
    """The conventions' messages document for messages in the journal's JSON encoding;
    ``finish_reason`` goes on each message (an output document). Over ``max_bytes`` the newest
    messages that fit are kept, and tool results whose calls were dropped go with them."""
    try:
        decoded = json.loads(journal_messages)
    except ValueError:
        return Document("")
    if not isinstance(decoded, list):
        return Document("")
    messages = [semconv_message(m, finish_reason) for m in decoded if isinstance(m, Mapping)]
    encoded = [_encode(message) for message in messages]
    total = sum(_cost(text) for text in encoded) + len(encoded) + 1
    if not max_bytes or total <= max_bytes or not messages:
        return Document("[" + ",".join(encoded) + "]")
    start = 0
    while start < len(encoded) - 1 and total > max_bytes:
        total -= _cost(encoded[start]) + 1
        start += 1
    # A kept answer to a call that was dropped refers to nothing in the trace.
    while start < len(encoded) - 1 and messages[start]["role"] == ROLE_TOOL:
        total -= _cost(encoded[start]) + 1
        start += 1
    if total <= max_bytes:
        return Document("[" + ",".join(encoded[start:]) + "]", True, start)
    newest = _fit_message(messages[-1], max_bytes - 2)
    if not newest:
        return Document("")
    return Document("[" + newest + "]", True, len(messages) - 1)


def system_instructions_document(segments: Sequence[str], *, max_bytes: int = 0) -> Document:
    """The system prompt as the conventions' parts array; empty segments are skipped and no
    segment at all is no document (the run configured no instructions)."""
    parts: list[Part] = [{"type": PART_TEXT, "content": text} for text in segments if text]
    if not parts:
        return Document("")
    text = _encode(parts)
    if not max_bytes or _cost(text) <= max_bytes:
        return Document(text)
    fitted = _fit_parts(parts, max_bytes)
    return Document(_encode(fitted), True) if fitted is not None else Document("")


def value_document(raw: str, *, max_bytes: int = 0) -> Document:
    """A tool call's arguments or result: the JSON it is when it is JSON and fits, else a JSON
    string of its text, shortened to fit."""
    if not raw:
        return Document("")
    valid = True
    try:
        json.loads(raw)
    except ValueError:
        valid = False
    if valid and (not max_bytes or _cost(raw) <= max_bytes):
        return Document(raw)
    if not max_bytes:
        return Document(_encode(raw))
    shortened = _shortened(raw, max_bytes - 2)
    return Document(_encode(shortened), valid or shortened != raw)
