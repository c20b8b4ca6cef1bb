"""What an MCP server's tool listing becomes in a run: named, filtered, validated tools.

Every imported tool is ``<alias>_<tool>``, always, so a name depends on its own server only and
does not move when another server's list does. A descriptor the model API would refuse (no
description, a schema whose root is not an object, a name outside the safe characters) is left
out with a reason, since all definitions travel in one request and one bad one would fail every
model call of the run.

An imported tool is never confirm-gated (gating another party's tool is not this process's to
do) and never served on: it declares neither MCP nor a2a exposure, so neither serving surface
can re-advertise a third party's tool under this agent's identity.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fisk_ai.tools.base import Kind, Outcome
from fisk_ai.tools.fiskapp.execute import OUTPUT_LIMIT, TRUNCATION_MARKER, OutputCapture
from fisk_ai.tools.imported import ImportedOutcome, ImportedTool, ResultImage
from fisk_ai.tools.names import unusable_name
from fisk_ai.tools.selection import ToolFilter, is_selected
from fisk_ai.util.redact import REDACTED, redact_url, redact_urls

__all__ = [
    "FILTERED_OUT",
    "MAX_TOOL_NAME_LENGTH",
    "MIN_SECRET_LENGTH",
    "McpCall",
    "McpDescriptor",
    "McpTool",
    "Redactor",
    "ServerListing",
    "import_listing",
    "imported_result",
    "mcp_source_label",
    "printable_command",
]

MIN_SECRET_LENGTH = 8
# What the Messages API accepts as a tool's name, and so what an imported name must fit.
MAX_TOOL_NAME_LENGTH = 64
FILTERED_OUT = "the entry's include or exclude leaves it out"


def mcp_source_label(name: str) -> str:
    """How a run's tool set and its messages name the tools of one mcp_clients entry."""
    return f'mcp_clients "{name}"'


@dataclass(frozen=True)
class Redactor:
    """Takes out of a message what an entry's references resolved to, and the credential parts
    of every URL in it.

    A resolved value shorter than ``MIN_SECRET_LENGTH`` is never searched for: replacing a
    string that short would blank digits and words all through an unrelated message. Longer
    values are replaced longest first, so a value containing another is replaced whole.
    """

    secrets: tuple[str, ...] = ()

    @staticmethod
    def of(values: Iterable[str]) -> Redactor:
        kept = {value for value in values if len(value) >= MIN_SECRET_LENGTH}
        return Redactor(tuple(sorted(kept, key=len, reverse=True)))

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return redact_urls(text)


def printable_command(command: str, args: Sequence[str]) -> str:
    """A stdio entry's command line as it may be printed: each argument that holds a URL goes
    through URL redaction, so a bridge such as ``mcp-remote https://host/sse?key=...`` does not
    print its key."""
    words = [command, *(redact_url(arg) if "://" in arg else arg for arg in args)]
    return " ".join(words)


class McpDescriptor(Protocol):
    """One tool of a server's listing, as the SDK reports it."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str | None: ...

    @property
    def input_schema(self) -> Any: ...


McpCall = Callable[[str, Mapping[str, Any]], Awaitable[Outcome]]
"""Calls the server's tool (by its own name) with decoded arguments; never raises for a
failure the model should read, which it returns as an error outcome naming the server."""


@dataclass(frozen=True)
class McpTool(ImportedTool):
    """A tool served by an MCP server; ``name`` is ``<alias>_<remote_name>``."""

    origin = "mcp"

    name: str
    remote_name: str
    server: str
    alias: str
    description: str
    input_schema: Mapping[str, Any]
    call: McpCall = field(repr=False, compare=False)

    @property
    def kind(self) -> Kind:
        return Kind.MCP

    async def forward(self, arguments: Mapping[str, Any]) -> Outcome:
        return await self.call(self.remote_name, arguments)


@dataclass(frozen=True)
class ServerListing:
    """One server's listing under its entry's filters: the tools kept (imported names), how
    many the server advertised, and each tool left out with the reason."""

    server: str
    alias: str
    tools: tuple[McpTool, ...]
    advertised: int
    skipped: tuple[tuple[str, str], ...] = ()


# The media types the Messages API reads in an image block, and the largest image it takes.
SENDABLE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024


def imported_result(content: Sequence[Any], structured: Any, *, is_error: bool) -> Outcome:
    """What the model is sent for an MCP tool's answer. Text is kept, bounded as a command's
    output is (the first and last 32 KiB of anything over 64 KiB, saying how much was cut);
    an image the Messages API reads stays an image; an embedded resource's text becomes text
    under its uri; anything else (audio, binary data, an image too large or of another type)
    is named in one line saying what it was and that it was left out. An answer with images
    is an ``ImportedOutcome`` carrying them."""
    capture = OutputCapture(OUTPUT_LIMIT)
    images: list[ResultImage] = []
    image_bytes = 0
    pieces: list[str] = []
    for item in content:
        kind = getattr(item, "type", "")
        if kind == "text":
            pieces.append(str(getattr(item, "text", "")))
        elif kind == "image":
            image, piece = _image(item, images)
            if image is not None and image_bytes + len(image.data) <= MAX_IMAGE_BYTES:
                image_bytes += len(image.data)
                images.append(image)
            elif image is not None:
                size = _decoded_size(image.data)
                piece = _left_out("an image", image.media_type, size, "within 5 MiB of images")
            pieces.append(piece)
        elif kind == "resource":
            pieces.append(_resource_text(getattr(item, "resource", None)))
        elif kind == "resource_link":
            name = getattr(item, "name", "") or ""
            pieces.append(
                f"[resource link {getattr(item, 'uri', '')}{f' ({name})' if name else ''}]"
            )
        elif kind == "audio":
            media_type = str(getattr(item, "mime_type", "") or "")
            size = _decoded_size(str(getattr(item, "data", "") or ""))
            pieces.append(_left_out("audio", media_type, size, "that the model reads"))
        else:
            pieces.append(f"[a {kind or 'content'} block the model cannot be sent was left out]")
    if not pieces and structured is not None:
        pieces.append(json.dumps(structured, ensure_ascii=False))
    capture.write("\n".join(pieces).encode("utf-8", errors="replace"))
    text, truncated = capture.result()
    if truncated:
        kept = len(text.encode("utf-8")) - len(TRUNCATION_MARKER)
        text += (
            f"\n[the result was {_bytes(capture.total)} of text; all but its first and last "
            f"{_bytes(OUTPUT_LIMIT // 2)} ({_bytes(capture.total - kept)}) was cut]"
        )
    if images:
        return ImportedOutcome(text, is_error=is_error, images=tuple(images))
    return Outcome(text, is_error=is_error)


def _image(item: Any, kept: Sequence[ResultImage]) -> tuple[ResultImage | None, str]:
    """The image of an image block and the line standing in its place, or no image and the
    line saying why it was left out."""
    media_type = str(getattr(item, "mime_type", "") or "")
    data = str(getattr(item, "data", "") or "")
    size = _decoded_size(data)
    if media_type not in SENDABLE_IMAGE_TYPES:
        return None, _left_out("an image", media_type, size, "of a type the model reads")
    shown = f"[image {len(kept) + 1}: {media_type}, {_bytes(size)}, attached]"
    return ResultImage(media_type, data), shown


def _resource_text(resource: Any) -> str:
    uri = str(getattr(resource, "uri", "") or "")
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return f"[resource {uri}]\n{text}"
    media_type = str(getattr(resource, "mime_type", "") or "")
    size = _decoded_size(str(getattr(resource, "blob", "") or ""))
    return _left_out(f"the resource {uri}", media_type, size, "as text")


def _left_out(what: str, media_type: str, size: int, sendable: str) -> str:
    kind = f"{media_type}, " if media_type else ""
    return f"[{what} ({kind}{_bytes(size)}) was left out: it is not {sendable}]"


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4 - data.count("=", -2)


def _bytes(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    if size >= 1024:
        return f"{size / 1024:.0f} KiB"
    return f"{size} bytes"


def _unusable(descriptor: McpDescriptor) -> str | None:
    if (bad_name := unusable_name(descriptor.name or "")) is not None:
        return bad_name
    schema = descriptor.input_schema
    if not isinstance(schema, Mapping):
        return "its input schema is not a JSON object"
    if schema.get("type") != "object":
        return "its input schema's root type is not object"
    if not (descriptor.description or "").strip():
        return "it has no description"
    return None


def import_listing(
    server: str,
    alias: str,
    descriptors: Sequence[McpDescriptor],
    call: McpCall,
    *,
    include: ToolFilter | None = None,
    exclude: ToolFilter | None = None,
    taken: Iterable[str] = (),
) -> ServerListing:
    """The tools of one listing this run may use. The entry's include and exclude apply to the
    server's own tool names (a listing carries no tags); a descriptor the model API would refuse
    is left out with the reason; a name already ``taken`` (a tool arriving in a re-list whose
    name another source holds) is left out and reported rather than failing the run."""
    taken_names = set(taken)
    tools: list[McpTool] = []
    skipped: list[tuple[str, str]] = []
    listed: set[str] = set()
    for descriptor in descriptors:
        name = descriptor.name or ""
        if not is_selected(name, (), include=include, exclude=exclude):
            skipped.append((name, FILTERED_OUT))
            continue
        reason = _unusable(descriptor)
        if reason is not None:
            skipped.append((name, reason))
            continue
        if name in listed:
            # The server's own duplicate: which of the two it would run is not ours to guess.
            skipped.append((name, "the server lists another tool of the same name first"))
            continue
        listed.add(name)
        imported = f"{alias}_{name}"
        if len(imported) > MAX_TOOL_NAME_LENGTH:
            skipped.append(
                (
                    name,
                    f'its imported name "{imported}" is over {MAX_TOOL_NAME_LENGTH} characters, '
                    "more than the model API takes; a shorter alias would fit it",
                )
            )
            continue
        if imported in taken_names:
            skipped.append((name, f'the name "{imported}" is taken by another tool'))
            continue
        taken_names.add(imported)
        tools.append(
            McpTool(
                name=imported,
                remote_name=name,
                server=server,
                alias=alias,
                description=(descriptor.description or "").strip(),
                input_schema=dict(descriptor.input_schema),
                call=call,
            )
        )
    return ServerListing(
        server=server,
        alias=alias,
        tools=tuple(tools),
        advertised=len(descriptors),
        skipped=tuple(skipped),
    )
