"""The vendor-neutral conversation model every package speaks; no type here names a vendor.

A message is a role and a list of content blocks, and a block is exactly one of text, thinking,
tool use, tool result or provider. Thinking signatures and provider blocks are carried untouched,
since a model rejects a turn whose signature was altered. Tool input stays raw JSON text so
arguments reach a tool with no schema-shaped intermediate in between.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol


class Role(enum.Enum):
    USER = "user"
    ASSISTANT = "assistant"


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ThinkingBlock:
    """Model reasoning. ``signature`` is opaque bytes, preserved and never inspected."""

    text: str
    signature: bytes = b""


@dataclass(frozen=True)
class ToolUseBlock:
    """A tool call. ``input`` is the raw JSON text the model produced (``{}`` when empty)."""

    id: str
    name: str
    input: str = "{}"


@dataclass(frozen=True)
class ResultImage:
    """An image a tool answered with, kept whole for the model to see: its media type and its
    base64 data, as the Messages API takes an image block."""

    media_type: str
    data: str


@dataclass(frozen=True)
class ToolResultBlock:
    """A tool's answer. ``images`` go to the model beside ``content``, which names each one in
    its place."""

    tool_use_id: str
    content: str
    is_error: bool = False
    images: tuple[ResultImage, ...] = ()


@dataclass(frozen=True)
class ProviderBlock:
    """A server-side block the neutral model does not name (tool search results, redacted
    thinking, multi-part tool results): its kind and the provider's raw JSON, kept verbatim."""

    kind: str
    raw: str


ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | ProviderBlock


@dataclass(frozen=True)
class Message:
    role: Role
    content: tuple[ContentBlock, ...]

    @property
    def text(self) -> str:
        """The message's text blocks joined, as a reader sees the narration."""
        return "".join(block.text for block in self.content if isinstance(block, TextBlock))

    @property
    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        return tuple(block for block in self.content if isinstance(block, ToolUseBlock))


def user_text(text: str) -> Message:
    return Message(Role.USER, (TextBlock(text),))


@dataclass(frozen=True)
class Usage:
    """Token counts of one or more model calls. Thinking counts inside ``output_tokens``."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_create_tokens: int = 0
    thinking_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_create_tokens + other.cache_create_tokens,
            self.thinking_tokens + other.thinking_tokens,
        )

    @property
    def processed(self) -> int:
        """What ``llm.budget.max_tokens`` counts: uncached input, output and both cache tiers."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_create_tokens
        )


@dataclass(frozen=True)
class ToolDef:
    """What a provider is told about one tool.

    ``input_schema`` is a JSON Schema object whose root type is ``object``. ``defer_loading`` asks a
    provider with tool search to send the definition behind the search tool.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    defer_loading: bool = False


class ThinkingMode(enum.Enum):
    """Three states: UNSET sends no thinking parameter at all; OFF sends it switched off."""

    UNSET = "unset"
    ON = "on"
    OFF = "off"


@dataclass(frozen=True)
class Request:
    """One model call. ``system`` is a list of blocks so a provider can put a cache breakpoint
    on the last one; ``interactive`` runs get the longer prompt-cache lifetime."""

    model: str
    system: tuple[str, ...]
    messages: tuple[Message, ...]
    tools: tuple[ToolDef, ...] = ()
    max_output_tokens: int = 0
    thinking: ThinkingMode = ThinkingMode.UNSET
    reasoning_effort: str = ""
    prompt_cache: bool = True
    interactive: bool = False
    tool_search: bool = True
    call_timeout: timedelta | None = None


STOP_MAX_TOKENS = "max_tokens"
STOP_PAUSE_TURN = "pause_turn"
STOP_REFUSAL = "refusal"
# A turn that stopped for one of these has not answered: it was cut off, paused to be continued,
# or refused.
UNFINISHED_STOPS = frozenset({STOP_MAX_TOKENS, STOP_PAUSE_TURN, STOP_REFUSAL})


def answers_the_prompt(message: Message, stop_reason: str) -> bool:
    """Whether a model turn's text is its answer: no tool asked for, and not stopped short."""
    return not message.tool_uses and stop_reason not in UNFINISHED_STOPS


@dataclass(frozen=True)
class Response:
    """A completed model turn. ``stop_reason`` is the provider's word, passed through as is."""

    message: Message
    stop_reason: str
    usage: Usage
    request_id: str = ""
    time_to_first_chunk: float | None = field(default=None, compare=False)
    """Seconds from sending the request to the first piece of the answer, for a provider that
    streams (``fisk_ai.llm.deltas``); None when it does not, or nothing was streamed."""
    response_id: str = field(default="", compare=False)
    """The provider's id for this reply (a Messages API ``msg_...``); empty when it gave none."""
    response_model: str = field(default="", compare=False)
    """The model that answered as the provider names it: the dated snapshot behind an alias."""


@dataclass(frozen=True)
class Capabilities:
    """What a provider can do, declared rather than discovered.

    ``provider`` is the neutral id stamped into a run's fingerprint; ``semconv_provider`` the name
    the OpenTelemetry conventions use for it.
    """

    provider: str
    semconv_provider: str
    tool_search: bool = False
    prompt_cache: bool = False
    thinking: bool = False


class Provider(Protocol):
    @property
    def capabilities(self) -> Capabilities: ...

    async def call(self, request: Request) -> Response:
        """One model call, held to ``request.call_timeout`` by the provider itself. Returns
        the complete answer; a provider that streams also hands each piece of text and thinking
        to ``fisk_ai.llm.deltas.report_delta`` as it arrives."""
        ...

    async def aclose(self) -> None:
        """Release connections and files; the provider is not called again."""
        ...
