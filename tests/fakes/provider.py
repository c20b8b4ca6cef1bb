"""A scripted model provider: it answers with the Responses it was given, in order, and keeps
every Request it received so a test can check what the model was sent.

Build replies with ``answer``, ``calls`` and ``call``::

    provider = ScriptedProvider([calls(call("t1", "status")), answer("done")])

Running out of replies fails the test with an AssertionError naming the request.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fisk_ai.llm.types import (
    Capabilities,
    ContentBlock,
    Message,
    Request,
    Response,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)

Reply = Response | Exception | Callable[[Request], Response]


class ScriptedProvider:
    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        provider: str = "scripted",
        tool_search: bool = False,
    ) -> None:
        self._replies = list(replies)
        self.requests: list[Request] = []
        self._capabilities = Capabilities(
            provider=provider, semconv_provider=provider, tool_search=tool_search
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    @property
    def calls(self) -> int:
        return len(self.requests)

    def add(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    async def aclose(self) -> None:
        self.closed = True

    async def call(self, request: Request) -> Response:
        self.requests.append(request)
        if not self._replies:
            raise AssertionError(f"the scripted provider has no reply for request {self.calls}")
        reply = self._replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            return reply(request)
        return reply


def usage(tokens: int = 10) -> Usage:
    return Usage(input_tokens=tokens, output_tokens=tokens)


def call(call_id: str, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolUseBlock:
    """A tool_use block; ``arguments`` as a mapping, or raw JSON text."""
    if arguments is None:
        text = "{}"
    elif isinstance(arguments, str):
        text = arguments
    else:
        text = json.dumps(arguments)
    return ToolUseBlock(call_id, name, text)


def calls(
    *uses: ToolUseBlock,
    text: str = "",
    thinking: str = "",
    tokens: int = 10,
) -> Response:
    """A reply asking for tools, with optional narration and thinking before the calls."""
    content: list[ContentBlock] = []
    if thinking:
        content.append(ThinkingBlock(thinking, b"sig"))
    if text:
        content.append(TextBlock(text))
    content.extend(uses)
    return Response(Message(Role.ASSISTANT, tuple(content)), "tool_use", usage(tokens))


def answer(text: str, *, stop_reason: str = "end_turn", tokens: int = 10) -> Response:
    """A reply of text alone."""
    return Response(Message(Role.ASSISTANT, (TextBlock(text),)), stop_reason, usage(tokens))
