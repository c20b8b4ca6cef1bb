"""The neutral message model as JSON: the shape a session journal and a cassette store.

A message is ``{"role": "user"|"assistant", "content": [block, ...]}`` and a block is an object
with exactly one key naming its kind: ``text``, ``thinking`` (signature base64), ``tool_use``
(input as JSON), ``tool_result`` (images as ``{"media_type", "data"}`` objects) or ``provider``
(raw as JSON).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from fisk_ai.errors import FiskError
from fisk_ai.llm.types import (
    ContentBlock,
    Message,
    ProviderBlock,
    ResultImage,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from fisk_ai.util import jsonx


class CodecError(FiskError):
    """A stored message does not have the neutral shape."""


def block_to_json(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"text": {"text": block.text}}
    if isinstance(block, ThinkingBlock):
        return {
            "thinking": {
                "text": block.text,
                "signature": base64.b64encode(block.signature).decode("ascii"),
            }
        }
    if isinstance(block, ToolUseBlock):
        return {
            "tool_use": {"id": block.id, "name": block.name, "input": _raw(block.input or "{}")}
        }
    if isinstance(block, ToolResultBlock):
        return {"tool_result": tool_result_to_json(block)}
    return {"provider": {"kind": block.kind, "raw": _raw(block.raw)}}


def tool_result_to_json(block: ToolResultBlock) -> dict[str, Any]:
    """A tool result's object; ``images`` (each ``{"media_type", "data"}``) is ours, so a resume
    sends the model what it saw, and a Go reader ignores it."""
    result: dict[str, Any] = {"tool_use_id": block.tool_use_id, "content": block.content}
    if block.is_error:
        result["is_error"] = True
    if block.images:
        result["images"] = [
            {"media_type": image.media_type, "data": image.data} for image in block.images
        ]
    return result


def images_from_json(value: Any) -> tuple[ResultImage, ...]:
    """A tool result's ``images`` list; absent (None) is none."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise CodecError("a tool result's images must be a list")
    images: list[ResultImage] = []
    for image in value:
        media_type = image.get("media_type") if isinstance(image, Mapping) else None
        data = image.get("data") if isinstance(image, Mapping) else None
        if not isinstance(media_type, str) or not isinstance(data, str):
            raise CodecError("a tool result's image must have a media_type and data, both text")
        images.append(ResultImage(media_type, data))
    return tuple(images)


def message_to_json(message: Message) -> dict[str, Any]:
    return {"role": message.role.value, "content": [block_to_json(b) for b in message.content]}


def block_from_json(data: Mapping[str, Any]) -> ContentBlock:
    if not isinstance(data, Mapping) or len(data) != 1:
        raise CodecError(f"a content block must have exactly one kind, not {_keys(data)}")
    kind, body = next(iter(data.items()))
    if not isinstance(body, Mapping):
        raise CodecError(f"the {kind} block must be an object")
    try:
        if kind == "text":
            return TextBlock(str(body["text"]))
        if kind == "thinking":
            signature = base64.b64decode(str(body.get("signature", "")), validate=True)
            return ThinkingBlock(str(body.get("text", "")), signature)
        if kind == "tool_use":
            return ToolUseBlock(
                str(body["id"]), str(body["name"]), json.dumps(body.get("input", {}))
            )
        if kind == "tool_result":
            return ToolResultBlock(
                str(body["tool_use_id"]),
                str(body.get("content", "")),
                bool(body.get("is_error")),
                images_from_json(body.get("images")),
            )
        if kind == "provider":
            return ProviderBlock(str(body["kind"]), json.dumps(body.get("raw")))
    except KeyError as missing:
        raise CodecError(f"the {kind} block lacks {missing.args[0]!r}") from None
    except ValueError as bad:
        raise CodecError(f"the {kind} block is malformed: {bad}") from None
    raise CodecError(f"unknown content block kind {kind!r}")


def message_from_json(data: Mapping[str, Any]) -> Message:
    if not isinstance(data, Mapping):
        raise CodecError("a message must be an object")
    try:
        role = Role(data.get("role"))
    except ValueError:
        raise CodecError(f"unknown message role {data.get('role')!r}") from None
    content = data.get("content") or []
    if not isinstance(content, list):
        raise CodecError("a message's content must be a list")
    return Message(role, tuple(block_from_json(block) for block in content))


def _raw(text: str) -> Any:
    # Text the provider produced; a journal keeps a lone surrogate (escaped) and reads up to
    # twice the usual depth, so the bound here is the journal's less its envelope.
    return jsonx.parse(
        text,
        max_depth=2 * jsonx.MAX_DEPTH - 8,
        surrogates=jsonx.Surrogates.KEEP,
        refuse_constants=False,
    )


def _keys(data: object) -> str:
    return ", ".join(sorted(data)) if isinstance(data, Mapping) else type(data).__name__
