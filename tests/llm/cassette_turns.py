"""A recorded cassette of two turns, a tool call and a final answer, and the requests that replay
it."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fisk_ai.llm.anthropic import CAPABILITIES
from fisk_ai.llm.replay import RecordingProvider
from fisk_ai.llm.types import (
    Capabilities,
    Message,
    Request,
    Response,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    user_text,
)
from tests.llm.conftest import MODEL

TOOLS = (
    ToolDef("say", "Say something", {"type": "object", "properties": {"m": {"type": "string"}}}),
    ToolDef("think", "Think something", {"type": "object"}),
)


class ScriptedProvider:
    """Answers from a fixed list of responses, for recording without a wire."""

    def __init__(self, responses: Sequence[Response]) -> None:
        self._responses = list(responses)

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    async def call(self, request: Request) -> Response:
        return self._responses.pop(0)

    async def aclose(self) -> None:
        """Holds no connection, so there is nothing to release."""


def tool_call_turn() -> Response:
    return Response(
        Message(
            Role.ASSISTANT,
            (
                ThinkingBlock("the cow should speak", b"sig"),
                ToolUseBlock("tu_1", "say", '{"m": "moo"}'),
            ),
        ),
        "tool_use",
        Usage(100, 20, 5, 6, 7),
        "req_1",
    )


def final_turn() -> Response:
    return Response(
        Message(Role.ASSISTANT, (TextBlock("The cow said moo."),)), "end_turn", Usage(1, 2)
    )


def first_request(**changes: Any) -> Request:
    fields: dict[str, Any] = {
        "model": MODEL,
        "system": ("Tell jokes with cows.",),
        "messages": (user_text("make the cow talk"),),
        "tools": TOOLS,
    }
    fields.update(changes)
    return Request(**fields)


def second_request(result: str = "moo", **changes: Any) -> Request:
    first = first_request()
    messages = (
        *first.messages,
        tool_call_turn().message,
        Message(Role.USER, (ToolResultBlock("tu_1", result),)),
    )
    return first_request(messages=messages, **changes)


async def record(path: Path) -> None:
    recorder = RecordingProvider(ScriptedProvider([tool_call_turn(), final_turn()]), path)
    await recorder.call(first_request())
    await recorder.call(second_request())
    await recorder.aclose()
