import json

import pytest

from fisk_ai.llm.codec import CodecError, message_from_json, message_to_json
from fisk_ai.llm.types import (
    Message,
    ProviderBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)


def test_every_block_kind_round_trips() -> None:
    message = Message(
        Role.ASSISTANT,
        (
            ThinkingBlock("hmm", b"\x00\xffsig"),
            TextBlock("looking"),
            ToolUseBlock("tu_1", "stream_rm", '{"stream": "ORDERS", "n": 1.50}'),
            ToolResultBlock("tu_1", "done", is_error=True),
            ProviderBlock("tool_search_tool_result", '{"type": "x", "content": [1, 2]}'),
        ),
    )
    stored = json.loads(json.dumps(message_to_json(message)))
    restored = message_from_json(stored)
    assert restored.content[0] == ThinkingBlock("hmm", b"\x00\xffsig")
    assert json.loads(restored.content[2].input) == {"stream": "ORDERS", "n": 1.5}  # type: ignore[union-attr]
    assert restored.content[3] == ToolResultBlock("tu_1", "done", is_error=True)
    assert json.loads(restored.content[4].raw) == {"type": "x", "content": [1, 2]}  # type: ignore[union-attr]


def test_the_stored_shape_names_each_block_by_its_kind() -> None:
    stored = message_to_json(Message(Role.USER, (TextBlock("hi"),)))
    assert stored == {"role": "user", "content": [{"text": {"text": "hi"}}]}


def test_a_block_with_two_kinds_is_refused() -> None:
    with pytest.raises(CodecError, match="exactly one kind"):
        message_from_json({"role": "user", "content": [{"text": {"text": "a"}, "tool_use": {}}]})


def test_an_unknown_role_is_refused() -> None:
    with pytest.raises(CodecError, match="role"):
        message_from_json({"role": "system", "content": []})
