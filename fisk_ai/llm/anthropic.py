"""The Anthropic provider: the only module that imports the anthropic SDK, and only on first use.

Importing this module costs nothing; the SDK (over a second to import) is loaded when the first
call is made, or earlier on a background thread through ``prewarm()``.

Requests are assembled by ``build_params`` without touching the SDK, so their shape is testable
offline. Responses are decoded from the raw JSON body rather than the SDK's typed models, so a
block this build does not name survives verbatim as a ``ProviderBlock``, an unknown stop reason is
carried, and tool input keeps the object the model wrote.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urlsplit

from fisk_ai.llm.deltas import Delta, DeltaKind, report_delta
from fisk_ai.llm.errors import (
    ProviderAuthError,
    ProviderCallError,
    ProviderError,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
    ProviderUnreachable,
)
from fisk_ai.llm.retries import RetryNotice, report_retry
from fisk_ai.llm.types import (
    Capabilities,
    ContentBlock,
    Message,
    ProviderBlock,
    Request,
    Response,
    Role,
    TextBlock,
    ThinkingBlock,
    ThinkingMode,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from fisk_ai.util import jsonx
from fisk_ai.util.durations import format_duration
from fisk_ai.util.fsx import create_private_file
from fisk_ai.util.redact import REDACTED, redact_url, redact_values
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    import httpx2
    from anthropic import APIError, AsyncAnthropic
    from anthropic._models import FinalRequestOptions

NAME = "anthropic"

CREDENTIAL_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_WEBHOOK_SIGNING_KEY",
    "ANTHROPIC_CUSTOM_HEADERS",
)

CAPABILITIES = Capabilities(
    provider=NAME,
    semconv_provider="anthropic",
    tool_search=True,
    prompt_cache=True,
    thinking=True,
)

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_OUTPUT_TOKENS = 8192
THINKING_MAX_OUTPUT_TOKENS = 16384
HTTP_DEBUG_FILE = "http-debug.log"

TOOL_SEARCH_THRESHOLD = 10
"""Deferrable plus built-in tools at or past which deferrable definitions go behind tool search."""

TOOL_SEARCH_TOOL_TYPE = "tool_search_tool_bm25_20251119"
TOOL_SEARCH_TOOL_NAME = "tool_search_tool_bm25"

STREAM_CAP_FACTOR = 10
"""How many times ``llm.budget.call_timeout`` one streamed attempt may last in all; the timeout
itself bounds each silence between two stream events."""

MID_STREAM_RETRY_DELAY = 0.5
"""The first wait before a call whose stream broke off is tried again; it doubles each time,
up to ``MID_STREAM_RETRY_DELAY_MAX``, with up to a quarter taken off at random, as the SDK
waits between the attempts of a refused request."""
MID_STREAM_RETRY_DELAY_MAX = 8.0

INTERACTIVE_CACHE_TTL = "1h"
BATCH_CACHE_TTL = "5m"

_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "proxy-authorization", "cookie"})
_DETAIL_LIMIT = 300
_NOT_A_MESSAGE = (
    "the endpoint answered with something other than a Messages API reply; check --base-url "
    "points at an Anthropic-compatible endpoint"
)


_prewarm_started = threading.Event()


def prewarm() -> None:
    """Import the SDK on a background thread so the import overlaps the rest of startup.
    Only the first call starts the import."""
    if _prewarm_started.is_set():
        return
    _prewarm_started.set()
    threading.Thread(target=_import_sdk, name="anthropic-prewarm", daemon=True).start()


def _import_sdk() -> None:
    # A failure here resurfaces, with its real cause, at the first call that needs the SDK.
    with contextlib.suppress(Exception):
        import anthropic  # noqa: F401


def validate_base_url(text: str) -> str:
    """Check an endpoint: http or https, naming a host, with no user name or password in it.

    Plain http is accepted for any host, since local runners, host gateways and services on a
    private network serve over it. Returns the URL with surrounding whitespace removed.
    """
    candidate = text.strip()
    source = "--base-url (or ANTHROPIC_BASE_URL)"
    try:
        parts = urlsplit(candidate)
        _ = parts.port
    except ValueError:
        raise ProviderError(f"{source} is not a well-formed URL") from None
    if "@" in parts.netloc:
        raise ProviderError(
            f"{source} must not carry a user name or password; "
            "pass the key with --api-key or ANTHROPIC_API_KEY instead"
        )
    if parts.scheme.lower() not in ("http", "https"):
        raise ProviderError(f'{source} must be an http or https URL, not "{redact_url(candidate)}"')
    if not parts.hostname:
        raise ProviderError(f'{source} must name a host, and "{redact_url(candidate)}" does not')
    return candidate


FIRST_TOOL_SEARCH_VERSION = (4, 5)
"""The first Claude version the Messages API offers tool search to; Opus 4.1 and earlier lack it."""

_CLAUDE_VERSION = re.compile(
    r"(?<![a-z0-9])claude-(?:(?:opus|sonnet|haiku|instant)-)?(\d+)(?:[-.](\d{1,2})(?!\d))?"
)
"""The version in a Claude model id, in either naming (``claude-3-5-sonnet-...``,
``claude-opus-4-1-...``), behind a cloud prefix (``anthropic.claude-...``) or before a Vertex
``@date``; the minor part is one or two digits, never the start of a date."""


def model_has_tool_search(model: str) -> bool:
    """Whether the Messages API offers tool search to ``model``.

    Only a Claude version before 4.5 is known to lack it; a name this rule cannot read (a newer
    family, a gateway's alias, a local model) keeps what the provider declares, since refusing
    it would take tool search from models that have it. ``llm.no_tool_search`` covers the rest.
    """
    found = _CLAUDE_VERSION.search(model.lower())
    if found is None:
        return True
    version = (int(found.group(1)), int(found.group(2) or 0))
    return version >= FIRST_TOOL_SEARCH_VERSION


@dataclass(frozen=True)
class ToolSearchOff:
    """Why a run cannot defer tools: ``setting`` is the configuration key responsible, ``reason``
    the clause an operator reads."""

    setting: str
    reason: str


def tool_search_off(*, supported: bool, disabled: bool, model: str) -> ToolSearchOff | None:
    """Why tool search is off for a run of ``model`` on a provider that does (``supported``) or
    does not offer it, with ``disabled`` set by ``llm.no_tool_search``; None when it is on."""
    if disabled:
        return ToolSearchOff("llm.no_tool_search", "llm.no_tool_search is set")
    if not supported:
        return ToolSearchOff("llm.provider", "llm.provider does not support tool search")
    if not model_has_tool_search(model):
        return ToolSearchOff(
            "llm.model",
            f"llm.model {single_line(model, 80)} has no tool search, like every Claude model "
            "up to Opus 4.1",
        )
    return None


def plan_tool_search(
    deferrable: Sequence[ToolDef],
    builtins: Sequence[ToolDef],
    *,
    supported: bool,
    disabled: bool,
    model: str,
) -> tuple[tuple[ToolDef, ...], str | None]:
    """Decide which definitions go behind tool search, returning the tools to send and a warning.

    ``deferrable`` are the application, remote, MCP and custom tools, each built with
    ``defer_loading`` true unless it must stay loaded (``ai:no_defer``); ``builtins`` are never
    deferred. At ``TOOL_SEARCH_THRESHOLD`` tools or more, counting both, the deferrable ones keep
    their flag when the provider supports tool search, ``model`` has it and ``disabled``
    (``llm.no_tool_search``) is false. Otherwise every tool is sent loaded, with a warning when
    the set is that large. The result lists the deferrable tools first, then the built-ins, in
    the order given.
    """
    count = len(deferrable) + len(builtins)
    loaded_builtins = tuple(_loaded(tool) for tool in builtins)
    off = tool_search_off(supported=supported, disabled=disabled, model=model)
    if count >= TOOL_SEARCH_THRESHOLD and off is None:
        return (*deferrable, *loaded_builtins), None
    tools = (*(_loaded(tool) for tool in deferrable), *loaded_builtins)
    if off is None or count < TOOL_SEARCH_THRESHOLD:
        return tools, None
    return tools, f"{off.reason}, so all {count} tools are sent to the model directly"


def _loaded(tool: ToolDef) -> ToolDef:
    return replace(tool, defer_loading=False) if tool.defer_loading else tool


def build_params(request: Request) -> dict[str, Any]:
    """The keyword arguments of one Messages API call for ``request``, as plain JSON values."""
    thinking_on = request.thinking is ThinkingMode.ON
    default_max = THINKING_MAX_OUTPUT_TOKENS if thinking_on else DEFAULT_MAX_OUTPUT_TOKENS
    history = request.messages
    if request.thinking is ThinkingMode.OFF:
        history = tuple(_without_thinking(message) for message in history)
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_output_tokens or default_max,
        "messages": [message_param(message) for message in history],
    }

    cache_control: dict[str, str] | None = None
    if request.prompt_cache:
        ttl = INTERACTIVE_CACHE_TTL if request.interactive else BATCH_CACHE_TTL
        cache_control = {"type": "ephemeral", "ttl": ttl}

    system: list[dict[str, Any]] = [
        {"type": "text", "text": text} for text in request.system if text
    ]
    if system:
        if cache_control is not None:
            system[-1]["cache_control"] = dict(cache_control)
        params["system"] = system
    if cache_control is not None:
        params["cache_control"] = dict(cache_control)

    tools = [
        tool_param(tool, deferred=request.tool_search and tool.defer_loading)
        for tool in request.tools
    ]
    if any(tool.get("defer_loading") for tool in tools):
        tools.append({"type": TOOL_SEARCH_TOOL_TYPE, "name": TOOL_SEARCH_TOOL_NAME})
    if tools:
        params["tools"] = tools

    if thinking_on:
        params["thinking"] = {"type": "adaptive", "display": "summarized"}
    elif request.thinking is ThinkingMode.OFF:
        params["thinking"] = {"type": "disabled"}
    if request.reasoning_effort:
        params["output_config"] = {"effort": request.reasoning_effort}
    if jsonx.has_lone_surrogate(params):
        # Half a character the model once sent (a \ud800 escape) is kept in the journal as it
        # came, but no endpoint takes it back: sent as U+FFFD, the request is always encodable.
        return jsonx.replace_lone_surrogates(params)  # type: ignore[no-any-return]
    return params


def _without_thinking(message: Message) -> Message:
    # An assistant turn left with no content is refused by the API, so such a turn keeps its
    # thinking rather than becoming empty.
    if message.role is not Role.ASSISTANT:
        return message
    kept = tuple(block for block in message.content if not _is_thinking(block))
    if not kept or len(kept) == len(message.content):
        return message
    return Message(message.role, kept)


def _is_thinking(block: ContentBlock) -> bool:
    return isinstance(block, ThinkingBlock) or (
        isinstance(block, ProviderBlock) and block.kind == "redacted_thinking"
    )


def tool_param(tool: ToolDef, *, deferred: bool = False) -> dict[str, Any]:
    """One custom tool definition as the API takes it."""
    param: dict[str, Any] = {
        "type": "custom",
        "name": tool.name,
        "input_schema": wire_schema(tool.input_schema),
    }
    if tool.description:
        param["description"] = tool.description
    if deferred:
        param["defer_loading"] = True
    return param


def wire_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The input schema as sent: keys forwarded verbatim, optional properties marked as such.

    The marker is added on the wire only, so the schema a tool validates against and the one
    hashed into a run's fingerprint never carry it.
    """
    wire = dict(schema)
    wire.setdefault("type", "object")
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        required = schema.get("required")
        required_names = set(required) if isinstance(required, list) else set()
        marked: dict[str, Any] = {}
        for name, prop in properties.items():
            if name not in required_names and isinstance(prop, Mapping):
                marked[name] = {**prop, "description": _optional(prop.get("description"))}
            else:
                marked[name] = prop
        wire["properties"] = marked
    return wire


def _optional(description: object) -> str:
    text = description if isinstance(description, str) else ""
    if not text.strip():
        return "Optional."
    if text.rstrip().endswith("(optional)"):
        return text
    return f"{text} (optional)"


def message_param(message: Message) -> dict[str, Any]:
    """A neutral message as the API takes it; provider blocks go back exactly as received."""
    return {"role": message.role.value, "content": [block_param(b) for b in message.content]}


def block_param(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        return {
            "type": "thinking",
            "thinking": block.text,
            "signature": block.signature.decode("utf-8"),
        }
    if isinstance(block, ToolUseBlock):
        return {
            "type": "tool_use",
            "id": block.id,
            "name": block.name,
            "input": _object(block.input),
        }
    if isinstance(block, ToolResultBlock):
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": block.tool_use_id,
            "content": _result_content(block),
        }
        if block.is_error:
            result["is_error"] = True
        return result
    raw = _stored_json(block.raw, f"a stored {block.kind} block")
    if not isinstance(raw, dict):
        raise ProviderError(f"a stored {block.kind} block is not a JSON object and cannot be sent")
    return raw


def _result_content(block: ToolResultBlock) -> str | list[dict[str, Any]]:
    if not block.images:
        return block.content
    images = [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
        }
        for image in block.images
    ]
    return [{"type": "text", "text": block.content}, *images]


def _object(text: str) -> Any:
    if not text.strip() or text.strip() == "null":
        return {}
    return _stored_json(text, "a stored tool call's input")


def _stored_json(text: str, what: str) -> Any:
    try:
        return jsonx.parse(
            text,
            max_depth=2 * jsonx.MAX_DEPTH,
            surrogates=jsonx.Surrogates.KEEP,
            refuse_constants=False,
        )
    except jsonx.JsonError as bad:
        raise ProviderError(f"{what} cannot be sent: it {bad}") from None


def decode_response(body: Mapping[str, Any], request_id: str = "") -> Response:
    """A Messages API response body as a neutral ``Response``."""
    content = body.get("content")
    if not isinstance(content, list):
        raise ProviderCallError(_NOT_A_MESSAGE, request_id=request_id)
    blocks = tuple(decode_block(block) for block in content if isinstance(block, Mapping))
    stop_reason = body.get("stop_reason")
    response_id = body.get("id")
    response_model = body.get("model")
    return Response(
        message=Message(Role.ASSISTANT, blocks),
        stop_reason=stop_reason if isinstance(stop_reason, str) else "",
        usage=decode_usage(body.get("usage")),
        request_id=request_id,
        response_id=response_id if isinstance(response_id, str) else "",
        response_model=response_model if isinstance(response_model, str) else "",
    )


def decode_block(block: Mapping[str, Any]) -> ContentBlock:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return TextBlock(block["text"])
    if kind == "thinking":
        signature = block.get("signature")
        return ThinkingBlock(
            str(block.get("thinking") or ""),
            signature.encode("utf-8") if isinstance(signature, str) else b"",
        )
    if (
        kind == "tool_use"
        and isinstance(block.get("id"), str)
        and isinstance(block.get("name"), str)
    ):
        return ToolUseBlock(block["id"], block["name"], json.dumps(block.get("input") or {}))
    return ProviderBlock(str(kind or "unknown"), json.dumps(block))


def decode_usage(usage: object) -> Usage:
    if not isinstance(usage, Mapping):
        return Usage()
    details = usage.get("output_tokens_details")
    thinking = details.get("thinking_tokens") if isinstance(details, Mapping) else None
    return Usage(
        input_tokens=_count(usage.get("input_tokens")),
        output_tokens=_count(usage.get("output_tokens")),
        cache_read_tokens=_count(usage.get("cache_read_input_tokens")),
        cache_create_tokens=_count(usage.get("cache_creation_input_tokens")),
        thinking_tokens=_count(thinking),
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class AnthropicProvider:
    """The Messages API through ``AsyncAnthropic``, one streamed call per model turn.

    The answer's text and thinking go to ``fisk_ai.llm.deltas`` as they are read; the call
    returns once the stream has delivered the whole message. A stream that breaks off or carries
    an overloaded, rate limit or server error event is tried again as a whole call, up to
    ``max_retries`` times, as the SDK retries a refused request.

    ``http_debug_path`` receives every HTTP exchange, credentials masked; ``trace_path`` one JSON
    line per request and per response. Both are created afresh, 0600, when the provider is built,
    so a bad path fails at startup. Call ``aclose()`` when done.
    """

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        http_debug_path: str | os.PathLike[str] | None = None,
        trace_path: str | os.PathLike[str] | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> None:
        if not api_key:
            raise ProviderError(
                "no Anthropic API key is set; set ANTHROPIC_API_KEY or pass --api-key"
            )
        if any(character.isspace() or not character.isprintable() for character in api_key):
            # Sent as it is, such a key fails in the HTTP layer and reads as an unreachable API.
            raise ProviderError(
                "the Anthropic API key holds a space, a line break or another control "
                "character; check ANTHROPIC_API_KEY or --api-key for a stray one"
            )
        self._api_key = api_key
        self._base_url = validate_base_url(base_url) if base_url else DEFAULT_BASE_URL
        self._max_retries = max_retries
        self._client: AsyncAnthropic | None = None
        self._calls = 0
        self._http_debug: IO[bytes] | None = None
        self._trace: IO[bytes] | None = None
        if http_debug_path is not None:
            self._http_debug = create_private_file(http_debug_path)
        if trace_path is not None:
            try:
                self._trace = create_private_file(trace_path)
            except BaseException:
                self._close_files()
                raise

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    async def call(self, request: Request) -> Response:
        params = build_params(request)
        self._calls += 1
        call_number = self._calls
        self._write_trace({"call": call_number, "request": params})
        client = self._ensure_client()
        import anthropic

        idle = request.call_timeout.total_seconds() if request.call_timeout else None
        attempt = 0
        while True:
            attempt += 1
            try:
                body, status, request_id, first_chunk = await self._streamed(client, params, idle)
            except _StreamBroken as broken:
                if attempt <= self._max_retries:
                    await _wait_to_retry(attempt, self._max_retries + 1, broken.status)
                    continue
                error: ProviderCallError = self._broken_error(broken)
            except TimeoutError:
                error = self._timeout_error(request)
            except ProviderCallError as refused:
                error = refused
            except anthropic.APIError as failure:
                error = self._call_error(failure, params, request)
            except ValueError:
                error = ProviderCallError(_NOT_A_MESSAGE)
            else:
                self._write_trace(
                    {
                        "call": call_number,
                        "status": status,
                        "request_id": request_id,
                        "response": body,
                    }
                )
                response = decode_response(body, request_id)
                return replace(response, time_to_first_chunk=first_chunk)
            self._write_trace({"call": call_number, "status": error.status, "error": str(error)})
            raise error

    async def _streamed(
        self, client: AsyncAnthropic, params: Mapping[str, Any], idle: float | None
    ) -> tuple[dict[str, Any], int, str, float | None]:
        """One streamed attempt: the complete message body, the HTTP status, the request id
        and the seconds from sending to the first piece of the answer.

        ``idle`` bounds the wait for the response and then each gap between two stream events;
        the whole attempt is capped at ``STREAM_CAP_FACTOR`` times as long. A stream that ends
        before ``message_stop``, breaks off, or carries a retryable error event raises
        ``_StreamBroken``; nothing read before that is kept.
        """
        import asyncio

        import anthropic
        import httpx2

        options: dict[str, Any] = {"timeout": idle} if idle else {}
        cap = idle * STREAM_CAP_FACTOR if idle else None
        # The HTTP debug hook reads a streamed body whole before the SDK hands the response
        # over, so no event is seen until the answer has ended: only the cap can apply then.
        first_wait = cap if self._http_debug is not None else idle
        started = time.monotonic()
        first_chunk: float | None = None
        message = _StreamedMessage()
        loop = asyncio.get_running_loop()
        async with (
            asyncio.timeout(cap),
            asyncio.timeout(first_wait) as quiet,
            client.messages.with_streaming_response.create(**params, stream=True, **options) as raw,
        ):
            request_id = raw.request_id or ""
            if raw.headers.get("content-type", "").startswith("application/json"):
                # An endpoint that ignores ``stream`` answers with the whole message at once.
                whole = await raw.json()
                if not isinstance(whole, dict):
                    raise ValueError("not a message")
                return whole, raw.status_code, request_id, None
            events = anthropic.AsyncStream.raw_events(raw.http_response)
            try:
                async for sse in events:
                    if idle:
                        quiet.reschedule(loop.time() + idle)
                    if sse.event == "error":
                        raise _stream_error(sse.data, request_id)
                    if not sse.data or sse.event == "ping":
                        continue
                    piece = message.take(sse.json())
                    if piece is None:
                        continue
                    if first_chunk is None:
                        first_chunk = time.monotonic() - started
                    report_delta(piece)
            except httpx2.TimeoutException:
                raise TimeoutError from None
            except httpx2.TransportError as failure:
                raise _StreamBroken(f"the stream broke off: {failure}") from None
            if not message.complete:
                raise _StreamBroken("the stream ended before the message did")
            return message.body, raw.status_code, request_id, first_chunk

    def _broken_error(self, broken: _StreamBroken) -> ProviderCallError:
        if broken.status:
            return ProviderUnavailable(
                f"the Anthropic API is {_busy_word(broken.status)} "
                f"({broken.status}: {self._detail(broken.detail)}); try again later",
                status=broken.status,
                request_id=broken.request_id,
            )
        return ProviderUnreachable(
            f"the answer from the Anthropic API at {redact_url(self._base_url)} broke off "
            f"mid-stream ({self._detail(broken.detail)}); try again"
        )

    async def aclose(self) -> None:
        """Close the HTTP connections and the debug and trace files."""
        client, self._client = self._client, None
        try:
            if client is not None:
                await client.close()
        finally:
            self._close_files()

    def _ensure_client(self) -> AsyncAnthropic:
        if self._client is not None:
            return self._client
        import anthropic

        http_client = None
        if self._http_debug is not None:
            http_client = anthropic.DefaultAsyncHttpxClient(
                event_hooks={"request": [self._dump_request], "response": [self._dump_response]}
            )
        self._client = _retry_reporting_client_class()(
            api_key=self._api_key,
            base_url=self._base_url,
            max_retries=self._max_retries,
            http_client=http_client,
        )
        return self._client

    def _timeout_error(self, request: Request) -> ProviderTimeout:
        limit = format_duration(request.call_timeout) if request.call_timeout else "its limit"
        return ProviderTimeout(
            f"the model call ran past llm.budget.call_timeout ({limit}): the model sent nothing "
            f"for that long, or its answer took over {STREAM_CAP_FACTOR} times that; raise it "
            "in agent.yaml or try again"
        )

    def _call_error(
        self, failure: APIError, params: Mapping[str, Any], request: Request
    ) -> ProviderCallError:
        import anthropic

        if isinstance(failure, anthropic.APITimeoutError):
            return self._timeout_error(request)
        if isinstance(failure, anthropic.APIConnectionError):
            return ProviderUnreachable(
                f"cannot reach the Anthropic API at {redact_url(self._base_url)}; "
                "check --base-url or ANTHROPIC_BASE_URL and that the endpoint is up"
            )
        if not isinstance(failure, anthropic.APIStatusError):
            return ProviderCallError(
                f"the Anthropic API call failed: {self._detail(failure.message)}"
            )
        status = failure.status_code
        request_id = failure.request_id or ""
        detail = f"{status}: {self._detail(failure.api_message or failure.response.reason_phrase)}"
        if status == 401:
            return ProviderAuthError(
                f"the Anthropic API refused the API key ({detail}); set a valid key in "
                "ANTHROPIC_API_KEY or pass it with --api-key",
                status=status,
                request_id=request_id,
            )
        if status == 403:
            return ProviderAuthError(
                f"the Anthropic API denied this API key the request ({detail}); check what the "
                "key in ANTHROPIC_API_KEY or --api-key is allowed to do",
                status=status,
                request_id=request_id,
            )
        if status == 429 or status >= 500:
            return ProviderUnavailable(
                f"the Anthropic API is {_busy_word(status)} ({detail}); try again later",
                status=status,
                request_id=request_id,
            )
        hint = ""
        if status == 404:
            hint = f"; check llm.model ({single_line(request.model, 80)}) and --base-url"
        elif status == 400:
            hint = _remedy_hint(params)
        return ProviderRejected(
            f"the Anthropic API rejected the request ({detail}){hint}",
            status=status,
            request_id=request_id,
        )

    def _masked(self, text: str) -> str:
        """``text`` without what this provider sends as credentials: the API key and the custom
        headers' values wherever they appear, and the value after any credential header's name
        (an endpoint echoing the request's headers back in a body or an error message)."""
        custom = _custom_headers()
        text = redact_values(text, [self._api_key, *custom.values()])
        return _echoed_header_values(frozenset(_SECRET_HEADERS | custom.keys())).sub(
            lambda match: match.group("name") + REDACTED, text
        )

    def _detail(self, text: object) -> str:
        return single_line(self._masked(str(text or "no detail given")), _DETAIL_LIMIT)

    async def _dump_request(self, request: httpx2.Request) -> None:
        target = redact_url(str(request.url))
        lines = [f">>> {_now()} {request.method} {target}", *_header_lines(request.headers)]
        try:
            body = request.content
        except Exception:
            body = b"(streamed body not captured)"
        self._write_debug(lines, body)

    async def _dump_response(self, response: httpx2.Response) -> None:
        await response.aread()
        target = redact_url(str(response.request.url))
        lines = [
            f"<<< {_now()} {response.status_code} {response.reason_phrase} "
            f"{response.request.method} {target}",
            *_header_lines(response.headers),
        ]
        self._write_debug(lines, response.content)

    def _write_debug(self, lines: list[str], body: bytes) -> None:
        if self._http_debug is None:
            return
        head = self._masked("\n".join(lines)).encode("utf-8", "replace")
        shown = self._masked(body.decode("utf-8", "replace")).encode("utf-8")
        self._http_debug.write(head + b"\n\n" + shown + b"\n\n")
        self._http_debug.flush()

    def _write_trace(self, record: dict[str, Any]) -> None:
        if self._trace is None:
            return
        line = {"time": _now(), **record}
        self._trace.write(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
        self._trace.flush()

    def _close_files(self) -> None:
        for handle in (self._http_debug, self._trace):
            if handle is not None:
                handle.close()
        self._http_debug = None
        self._trace = None


class _StreamBroken(Exception):
    """An attempt whose stream did not deliver the whole message; the call may be tried again.
    ``status`` is the HTTP status an error event stands for, 0 for a stream cut off."""

    def __init__(self, detail: str, *, status: int = 0, request_id: str = "") -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.request_id = request_id


# The error events of a stream that a refused request would have answered with these statuses,
# so they are retried as the SDK retries those.
_RETRYABLE_STREAM_ERRORS = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500}


def _stream_error(data: str, request_id: str) -> Exception:
    """What an ``error`` event says: a ``_StreamBroken`` to retry, or the call's failure."""
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    failure = body.get("error") if isinstance(body, Mapping) else None
    kind = str(failure.get("type") or "") if isinstance(failure, Mapping) else ""
    detail = str(failure.get("message") or "") if isinstance(failure, Mapping) else data
    detail = f"{kind}: {detail}" if kind else detail or "no detail given"
    status = _RETRYABLE_STREAM_ERRORS.get(kind, 0)
    if status:
        return _StreamBroken(detail, status=status, request_id=request_id)
    return ProviderRejected(
        f"the Anthropic API ended the answer with an error ({single_line(detail, _DETAIL_LIMIT)})",
        request_id=request_id,
    )


async def _wait_to_retry(attempt: int, attempts: int, status: int) -> None:
    """Report and wait out the pause before attempt ``attempt + 1`` of ``attempts``."""
    import asyncio
    import random

    delay = min(MID_STREAM_RETRY_DELAY * 2 ** (attempt - 1), MID_STREAM_RETRY_DELAY_MAX)
    wait = delay * (1 - 0.25 * random.random())  # noqa: S311
    report_retry(
        RetryNotice(attempt=attempt + 1, attempts=attempts, wait_seconds=wait, status=status)
    )
    await asyncio.sleep(wait)


class _StreamedMessage:
    """A Messages API body put together from the events of its stream, in the shape a
    non-streaming call answers with, so ``decode_response`` reads both the same way."""

    def __init__(self) -> None:
        self.body: dict[str, Any] = {"content": []}
        self.complete = False
        self._json_parts: dict[int, list[str]] = {}

    def take(self, event: Mapping[str, Any]) -> Delta | None:
        """Fold one event in; returns the piece of text or thinking it adds, if any."""
        kind = event.get("type")
        content: list[dict[str, Any]] = self.body["content"]
        if kind == "message_start" and isinstance(event.get("message"), Mapping):
            self.body = {**event["message"], "content": []}
        elif kind == "content_block_start" and isinstance(event.get("content_block"), Mapping):
            content.append(dict(event["content_block"]))
        elif kind == "content_block_delta" and isinstance(event.get("delta"), Mapping):
            return self._add(event.get("index"), event["delta"])
        elif kind == "content_block_stop":
            self._finish(event.get("index"))
        elif kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, Mapping):
                self.body.update(delta)
            usage = event.get("usage")
            if isinstance(usage, Mapping):
                counts = dict(self.body.get("usage") or {})
                counts.update({key: value for key, value in usage.items() if value is not None})
                self.body["usage"] = counts
        elif kind == "message_stop":
            self.complete = True
        return None

    def _block(self, index: object) -> dict[str, Any] | None:
        content: list[dict[str, Any]] = self.body["content"]
        if isinstance(index, int) and 0 <= index < len(content):
            return content[index]
        return None

    def _add(self, index: object, delta: Mapping[str, Any]) -> Delta | None:
        block = self._block(index)
        if block is None:
            return None
        match delta.get("type"):
            case "text_delta":
                piece = str(delta.get("text") or "")
                block["text"] = str(block.get("text") or "") + piece
                return Delta(DeltaKind.TEXT, piece) if piece else None
            case "thinking_delta":
                piece = str(delta.get("thinking") or "")
                block["thinking"] = str(block.get("thinking") or "") + piece
                return Delta(DeltaKind.THINKING, piece) if piece else None
            case "signature_delta":
                block["signature"] = str(block.get("signature") or "") + str(
                    delta.get("signature") or ""
                )
            case "input_json_delta":
                assert isinstance(index, int)
                self._json_parts.setdefault(index, []).append(str(delta.get("partial_json") or ""))
            case "citations_delta":
                block.setdefault("citations", []).append(delta.get("citation"))
        return None

    def _finish(self, index: object) -> None:
        block = self._block(index)
        parts = self._json_parts.pop(index, None) if isinstance(index, int) else None
        if block is None or parts is None:
            return
        text = "".join(parts)
        try:
            block["input"] = json.loads(text) if text.strip() else {}
        except ValueError:
            # Kept as the model wrote it: the loop turns input no reader can take into an error
            # result the model reads.
            block["input"] = text


@functools.cache
def _retry_reporting_client_class() -> type[AsyncAnthropic]:
    """``AsyncAnthropic`` telling ``fisk_ai.llm.retries`` about each retry before it waits.

    The SDK retries inside its own request loop and offers no hook for it (its middleware runs
    per attempt, before the wait is chosen), so the one method that chooses the wait and sleeps
    is replaced by one that also reports the attempt and the wait. It is built on first use,
    since the SDK is imported only then.
    """
    import anthropic
    import anyio

    class RetryReportingAnthropic(anthropic.AsyncAnthropic):
        async def _sleep_for_retry(
            self,
            *,
            retries_taken: int,
            max_retries: int,
            options: FinalRequestOptions,
            response: httpx2.Response | None,
        ) -> None:
            headers = response.headers if response is not None else None
            wait = self._calculate_retry_timeout(max_retries - retries_taken, options, headers)
            report_retry(
                RetryNotice(
                    attempt=retries_taken + 2,
                    attempts=max_retries + 1,
                    wait_seconds=wait,
                    status=response.status_code if response is not None else 0,
                )
            )
            await anyio.sleep(wait)

    return RetryReportingAnthropic


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _header_lines(headers: Mapping[str, str]) -> list[str]:
    secret = _SECRET_HEADERS | _custom_headers().keys()
    return [
        f"{name}: {REDACTED if name.lower() in secret else value}"
        for name, value in headers.items()
    ]


def _custom_headers() -> dict[str, str]:
    """The headers ANTHROPIC_CUSTOM_HEADERS adds (the SDK sends them), by lowercase name: their
    values are whatever an operator put there, a gateway token as often as not, so never
    logged. Read as the SDK reads them, one ``Name: value`` a line."""
    text = os.environ.get("ANTHROPIC_CUSTOM_HEADERS", "")
    headers = (line.partition(":") for line in text.split("\n") if ":" in line)
    return {name.strip().lower(): value.strip() for name, _, value in headers}


@functools.lru_cache(maxsize=8)
def _echoed_header_values(names: frozenset[str]) -> re.Pattern[str]:
    """A credential header's name, as a header line or a JSON or Python mapping writes it (JSON
    quoted inside JSON included), followed by its value (``Bearer`` and all): the name is kept,
    the value replaced."""
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(
        rf"(?i)(?P<name>\b(?:{alternatives})(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?)"
        r"(?:bearer\s+)?[^\s\"'\\,;}\]]+"
    )


def _busy_word(status: int) -> str:
    if status == 429:
        return "rate limiting this key"
    if status == 529:
        return "overloaded"
    return "failing"


def _remedy_hint(params: Mapping[str, Any]) -> str:
    hints = []
    if "thinking" in params:
        hints.append(
            "if this model does not take thinking, remove the llm.thinking block from agent.yaml "
            "(enabled: false still sends the parameter)"
        )
    if "output_config" in params:
        hints.append(
            "if this model does not take a reasoning effort, remove llm.reasoning_effort from "
            "agent.yaml"
        )
    return "".join(f"; {hint}" for hint in hints)


def create_provider(
    *,
    api_key: str = "",
    base_url: str | None = None,
    http_debug_path: str | os.PathLike[str] | None = None,
    trace_path: str | os.PathLike[str] | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    **_other_options: Any,
) -> AnthropicProvider:
    # Options meant for another provider (a cassette path) are ignored, so a host can hand the
    # same set to whichever provider llm.provider names.
    return AnthropicProvider(api_key, base_url, http_debug_path, trace_path, max_retries)
