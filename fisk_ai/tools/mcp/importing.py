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

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fisk_ai.tools.base import ExecDeps, Kind, Outcome
from fisk_ai.tools.imported import ImportedTool
from fisk_ai.tools.selection import ToolFilter, is_selected
from fisk_ai.tools.validation import ArgumentsError, parse_arguments
from fisk_ai.util.redact import REDACTED, redact_url

__all__ = [
    "MIN_SECRET_LENGTH",
    "McpCall",
    "McpDescriptor",
    "McpTool",
    "Redactor",
    "ServerListing",
    "import_listing",
    "mcp_source_label",
    "printable_command",
]

MIN_SECRET_LENGTH = 8
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+", re.ASCII)
_URL = re.compile(r"https?://[^\s\"'<>]+")


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
        return _URL.sub(lambda match: redact_url(match.group(0)), text)


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

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        try:
            parsed = parse_arguments(self.name, arguments)
        except ArgumentsError as exc:
            return Outcome(str(exc), is_error=True)
        return await self.call(self.remote_name, parsed)


@dataclass(frozen=True)
class ServerListing:
    """One server's listing under its entry's filters: the tools kept (imported names), how
    many the server advertised, and each tool left out with the reason."""

    server: str
    alias: str
    tools: tuple[McpTool, ...]
    advertised: int
    skipped: tuple[tuple[str, str], ...] = ()


def _unusable(descriptor: McpDescriptor) -> str | None:
    if _TOOL_NAME.fullmatch(descriptor.name or "") is None:
        return "its name is not letters, digits, - and _ only"
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
    for descriptor in descriptors:
        name = descriptor.name or ""
        if not is_selected(name, (), include=include, exclude=exclude):
            skipped.append((name, "the entry's include or exclude leaves it out"))
            continue
        reason = _unusable(descriptor)
        if reason is not None:
            skipped.append((name, reason))
            continue
        imported = f"{alias}_{name}"
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
