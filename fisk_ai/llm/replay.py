"""Cassettes: record every model call of a run, then answer the same calls again offline.

A cassette is JSON lines, one exchange per model call in call order::

    {"version": 1, "call": 1, "request": {...}, "response": {...}}

The request is the neutral one (model, system blocks, messages in the codec's shape, tool
definitions, thinking, effort, output cap) and the response the neutral answer (message, stop
reason, usage, request id). ``RecordingProvider`` writes each exchange as soon as the call
returns, so a run that crashes keeps what it recorded; a call that fails is not recorded.

``ReplayProvider`` hands the recorded answer's text and thinking on in pieces, as a streaming
provider would (``fisk_ai.llm.deltas``), ``REPLAY_PIECE`` characters at a time and, when
``FISK_AI_REPLAY_PACE`` names a number of milliseconds, that long apart, so an offline demo shows
the answer being written.

``ReplayProvider`` answers call N with exchange N and checks first that the run is still having
the recorded conversation. It compares the model, the messages block by block (tool input and
provider blocks as parsed JSON, so spacing and key order do not matter) and the set of tool
names. It ignores the system prompt, tool descriptions and schemas, thinking and effort settings,
the output cap, cache markers, timing and request ids: those may differ between the machine that
recorded and the one replaying without changing what the model was asked.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from fisk_ai.llm.anthropic import CAPABILITIES as ANTHROPIC_CAPABILITIES
from fisk_ai.llm.codec import CodecError, message_from_json, message_to_json
from fisk_ai.llm.deltas import Delta, DeltaKind, listening, report_delta
from fisk_ai.llm.errors import ProviderError, ProviderRejected
from fisk_ai.llm.types import (
    Capabilities,
    ContentBlock,
    Message,
    Provider,
    ProviderBlock,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from fisk_ai.util import bounded, jsonx
from fisk_ai.util.fsx import create_private_file
from fisk_ai.util.sanitize import single_line

NAME = "replay"
CASSETTE_VERSION = 1
CASSETTE_ENV = "FISK_AI_CASSETTE"
"""Where the replay provider finds its cassette when the host passes no ``path`` option."""
PACE_ENV = "FISK_AI_REPLAY_PACE"
"""Milliseconds between two pieces of a replayed answer; unset or 0 hands them on at once."""
REPLAY_PIECE = 16
"""Characters of text or thinking per piece of a replayed answer."""

_SNIPPET = 60


class CassetteError(ProviderError):
    """A cassette cannot be read."""


class CassetteMismatch(ProviderRejected):
    """The run asked for something the cassette did not record."""


def request_to_json(request: Request) -> dict[str, Any]:
    return {
        "model": request.model,
        "system": list(request.system),
        "messages": [message_to_json(message) for message in request.messages],
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": dict(tool.input_schema),
                "defer_loading": tool.defer_loading,
            }
            for tool in request.tools
        ],
        "thinking": request.thinking.value,
        "reasoning_effort": request.reasoning_effort,
        "max_output_tokens": request.max_output_tokens,
    }


def response_to_json(response: Response) -> dict[str, Any]:
    usage = response.usage
    return {
        "message": message_to_json(response.message),
        "stop_reason": response.stop_reason,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_create_tokens": usage.cache_create_tokens,
            "thinking_tokens": usage.thinking_tokens,
        },
        "request_id": response.request_id,
    }


def response_from_json(data: Mapping[str, Any]) -> Response:
    usage = data.get("usage") or {}
    return Response(
        message=message_from_json(data["message"]),
        stop_reason=str(data.get("stop_reason") or ""),
        usage=Usage(
            input_tokens=int(usage.get("input_tokens", 0)),
            output_tokens=int(usage.get("output_tokens", 0)),
            cache_read_tokens=int(usage.get("cache_read_tokens", 0)),
            cache_create_tokens=int(usage.get("cache_create_tokens", 0)),
            thinking_tokens=int(usage.get("thinking_tokens", 0)),
        ),
        request_id=str(data.get("request_id") or ""),
    )


class RecordingProvider:
    """Passes every call to ``inner`` and appends the exchange to a new cassette at ``path``.

    The cassette is created afresh, 0600, when the recorder is built. ``aclose()`` closes it and,
    when ``inner`` has an ``aclose``, the inner provider too.
    """

    def __init__(self, inner: Provider, path: str | os.PathLike[str]) -> None:
        self._inner = inner
        self._file: IO[bytes] | None = create_private_file(path)
        self._calls = 0

    @property
    def capabilities(self) -> Capabilities:
        return self._inner.capabilities

    async def call(self, request: Request) -> Response:
        response = await self._inner.call(request)
        self._calls += 1
        if self._file is not None:
            exchange = {
                "version": CASSETTE_VERSION,
                "call": self._calls,
                "request": request_to_json(request),
                "response": response_to_json(response),
            }
            self._file.write(json.dumps(exchange, ensure_ascii=False).encode("utf-8") + b"\n")
            self._file.flush()
        return response

    async def aclose(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()
        close = getattr(self._inner, "aclose", None)
        if close is not None:
            await close()


class _Exchange:
    __slots__ = ("messages", "model", "response", "tool_names")

    def __init__(self, data: Mapping[str, Any]) -> None:
        request = data["request"]
        self.model = str(request["model"])
        self.messages = tuple(message_from_json(m) for m in request["messages"])
        self.tool_names = frozenset(str(tool["name"]) for tool in request.get("tools") or ())
        self.response = response_from_json(data["response"])


class ReplayProvider:
    """Answers model call N from exchange N of the cassette at ``path``, with no network."""

    def __init__(self, path: str | os.PathLike[str], *, pace_seconds: float = 0.0) -> None:
        self._path = Path(path)
        self._exchanges = _load(self._path)
        self._next = 0
        self._pace_seconds = pace_seconds

    @property
    def capabilities(self) -> Capabilities:
        # The same declared abilities as the provider that recorded, so a replayed run assembles
        # the same requests (tool deferral included) as the recorded one did.
        return ANTHROPIC_CAPABILITIES

    async def call(self, request: Request) -> Response:
        call_number = self._next + 1
        if self._next >= len(self._exchanges):
            raise CassetteMismatch(
                f"the cassette {self._path} holds {len(self._exchanges)} model calls and the run "
                f"asked for call {call_number}; record the run again"
            )
        exchange = self._exchanges[self._next]
        difference = _difference(exchange, request)
        if difference is not None:
            raise CassetteMismatch(
                f"the cassette {self._path} diverges at model call {call_number}: {difference}"
            )
        self._next += 1
        await self._stream(exchange.response.message)
        return exchange.response

    async def _stream(self, message: Message) -> None:
        if not listening():
            return
        for block in message.content:
            if isinstance(block, TextBlock):
                kind, whole = DeltaKind.TEXT, block.text
            elif isinstance(block, ThinkingBlock):
                kind, whole = DeltaKind.THINKING, block.text
            else:
                continue
            for start in range(0, len(whole), REPLAY_PIECE):
                if self._pace_seconds:
                    await asyncio.sleep(self._pace_seconds)
                report_delta(Delta(kind, whole[start : start + REPLAY_PIECE]))

    async def aclose(self) -> None:
        return None


def _load(path: Path) -> tuple[_Exchange, ...]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CassetteError(f"the cassette {path} does not exist; check {CASSETTE_ENV}") from None
    except (OSError, UnicodeDecodeError) as failure:
        raise CassetteError(f"cannot read the cassette {path}: {failure}") from None
    lines = text.split("\n")
    exchanges = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            recorded = bounded.loads_json(line, what="the line", surrogates=jsonx.Surrogates.KEEP)
            exchanges.append(_Exchange(recorded))
        except (ValueError, KeyError, TypeError, AttributeError, CodecError) as failure:
            if number == len(lines):
                # The last line lacks its newline: a recording cut off mid-write. What came
                # before it is whole and still answers.
                break
            raise CassetteError(
                f"line {number} of the cassette {path} is not a recorded exchange ({failure})"
            ) from None
    return tuple(exchanges)


def _difference(exchange: _Exchange, request: Request) -> str | None:
    if exchange.model != request.model:
        return f'the model was recorded as "{exchange.model}" but is now "{request.model}"'
    recorded, current = exchange.messages, request.messages
    for number, (old, new) in enumerate(zip(recorded, current, strict=False), start=1):
        difference = _message_difference(number, old, new)
        if difference is not None:
            return difference
    if len(current) > len(recorded):
        extra = len(recorded) + 1
        return f"message {extra} is new ({_describe_message(current[extra - 1])})"
    if len(current) < len(recorded):
        missing = len(current) + 1
        return (
            f"message {missing} ({_describe_message(recorded[missing - 1])}) was recorded but "
            "is now missing"
        )
    names = frozenset(tool.name for tool in request.tools)
    if names != exchange.tool_names:
        parts = []
        if exchange.tool_names - names:
            parts.append(f"{_names(exchange.tool_names - names)} recorded but now absent")
        if names - exchange.tool_names:
            parts.append(f"{_names(names - exchange.tool_names)} new")
        return f"the tools differ: {' and '.join(parts)}"
    return None


def _message_difference(number: int, old: Message, new: Message) -> str | None:
    if old.role is not new.role:
        return (
            f"message {number} was recorded as a {old.role.value} message but is now a "
            f"{new.role.value} message"
        )
    longest = max(len(old.content), len(new.content))
    for index in range(longest):
        old_block = old.content[index] if index < len(old.content) else None
        new_block = new.content[index] if index < len(new.content) else None
        if old_block is not None and new_block is not None and _same_block(old_block, new_block):
            continue
        where = f"message {number}" if longest == 1 else f"message {number} block {index + 1}"
        return f"{where} was recorded as {_describe(old_block)} but is now {_describe(new_block)}"
    return None


def _same_block(old: ContentBlock, new: ContentBlock) -> bool:
    if isinstance(old, ToolUseBlock) and isinstance(new, ToolUseBlock):
        return (old.id, old.name, _parsed(old.input)) == (new.id, new.name, _parsed(new.input))
    if isinstance(old, ProviderBlock) and isinstance(new, ProviderBlock):
        return old.kind == new.kind and _parsed(old.raw) == _parsed(new.raw)
    return old == new


def _parsed(text: str) -> Any:
    try:
        return jsonx.parse(text or "{}", surrogates=jsonx.Surrogates.KEEP, refuse_constants=False)
    except jsonx.JsonError:
        return text


def _describe_message(message: Message) -> str:
    described = ", ".join(_describe(block) for block in message.content) or "no content"
    return f"{message.role.value}: {described}"


def _describe(block: ContentBlock | None) -> str:
    if block is None:
        return "nothing"
    if isinstance(block, TextBlock):
        return f'text "{_snippet(block.text)}"'
    if isinstance(block, ThinkingBlock):
        return f'thinking "{_snippet(block.text)}"'
    if isinstance(block, ToolUseBlock):
        return f"a tool_use of {block.name} ({block.id}) with {_snippet(block.input)}"
    if isinstance(block, ToolResultBlock):
        failed = " (an error)" if block.is_error else ""
        return f'a tool_result for {block.tool_use_id}{failed} "{_snippet(block.content)}"'
    return f"a {block.kind} block"


def _snippet(text: str) -> str:
    return single_line(text, _SNIPPET)


def _names(names: frozenset[str]) -> str:
    return ", ".join(sorted(names))


def create_provider(
    *, path: str | os.PathLike[str] | None = None, **_other_options: Any
) -> ReplayProvider:
    # Connection options meant for a live provider (api_key, base_url, ...) mean nothing here.
    chosen = path or os.environ.get(CASSETTE_ENV, "")
    if not chosen:
        raise ProviderError(
            f"llm.provider replay needs a cassette; set {CASSETTE_ENV} to the recorded file"
        )
    return ReplayProvider(chosen, pace_seconds=_pace_from_environment())


def _pace_from_environment() -> float:
    text = os.environ.get(PACE_ENV, "").strip()
    if not text:
        return 0.0
    try:
        milliseconds = float(text)
    except ValueError:
        milliseconds = -1.0
    if not 0 <= milliseconds <= 10_000:
        raise ProviderError(
            f"{PACE_ENV} must be a number of milliseconds from 0 to 10000, not {text!r}"
        )
    return milliseconds / 1000
