"""Tools another agent serves over a2a, imported from its card and called through its peer.

Nothing here speaks NATS: the host layer discovers each peer and lends every tool of that peer
one ``RemoteCall``, which sends a tool.request and returns the tool.reply (or raises
``RemoteCallFailed`` when the peer cannot be reached). A remote tool is never confirm-gated here
(gating another party's tool is not this process's to do) and never served onward, since
re-serving it under this agent's identity would need an operator's opt-in nobody can record.

Naming is one pass over every host at once, so the result does not depend on which peer answered
first: a tool keeps its bare remote name unless a local tool already has it or more than one
host offers it, and is then called ``<alias>_<name>``. Any name that still occurs twice after
that is found by counting and aborts, naming both tools.

The line surfaces show a call as ``name (remote <alias>)``. The loop's tool call event carries a
command line only for tools that show one, so a remote tool shows that text as its "command":
it reaches every surface, a remote caller of the prompts endpoint included, with no new event
field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from fisk_ai.errors import FiskError
from fisk_ai.tools.base import ExecRecord, Kind, Outcome
from fisk_ai.tools.imported import ImportedTool
from fisk_ai.tools.names import unusable_name
from fisk_ai.tools.selection import ToolFilter, is_selected
from fisk_ai.tools.toolset import ToolCollisionError, ToolSource

__all__ = [
    "RemoteCall",
    "RemoteCallFailed",
    "RemoteDescriptor",
    "RemoteExec",
    "RemoteHost",
    "RemoteReply",
    "RemoteTool",
    "import_card",
    "name_remote_tools",
    "outcome_of",
    "remote_source_label",
]


class RemoteCallFailed(FiskError):
    """A call to a peer's tool got no answer (nobody serving, a gap past request_timeout, a
    broken reply); the message says so and is handed to the model as the tool's error."""


class RemoteExec(Protocol):
    """The command a served tool call ran, as the peer reports it."""

    @property
    def command(self) -> str: ...

    @property
    def exit_code(self) -> int: ...

    @property
    def truncated(self) -> bool: ...


class RemoteReply(Protocol):
    """A peer's answer to one tool call: an a2a tool.reply, or anything shaped like one."""

    @property
    def is_error(self) -> bool: ...

    @property
    def code(self) -> str | None: ...

    @property
    def output(self) -> str: ...

    @property
    def exec(self) -> RemoteExec | None: ...


class RemoteDescriptor(Protocol):
    """One tool on a peer's card."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any] | None: ...


RemoteCall = Callable[[str, Mapping[str, Any]], Awaitable[RemoteReply]]
"""Calls the peer's tool (by its remote name) with decoded arguments and returns its reply."""


def remote_source_label(alias: str) -> str:
    """How a run's tool set and its messages name the tools of one remote_tools entry."""
    return f'remote_tools "{alias}"'


def outcome_of(reply: RemoteReply) -> Outcome:
    """The outcome a peer's reply stands for: with the exec record the peer sent, so the model
    receives the same CommandResult envelope a local command would produce; an error reply as
    an error, with its code when the peer gave no text."""
    if reply.is_error:
        text = (
            reply.output.strip() or f"the remote agent refused the call ({reply.code or 'error'})"
        )
        return Outcome(text, is_error=True)
    ran = reply.exec
    record = None if ran is None else ExecRecord(ran.command, ran.exit_code, ran.truncated)
    return Outcome(reply.output, exec=record)


@dataclass(frozen=True)
class RemoteTool(ImportedTool):
    """A tool served by another agent; ``name`` is what this run calls it, ``remote_name`` what
    the peer does."""

    origin = "remote"

    name: str
    remote_name: str
    alias: str
    description: str
    input_schema: Mapping[str, Any]
    call: RemoteCall = field(repr=False, compare=False)

    @property
    def kind(self) -> Kind:
        return Kind.REMOTE

    def renamed(self, name: str) -> RemoteTool:
        return replace(self, name=name)

    async def forward(self, arguments: Mapping[str, Any]) -> Outcome:
        try:
            reply = await self.call(self.remote_name, arguments)
        except RemoteCallFailed as exc:
            return Outcome(str(exc), is_error=True)
        return outcome_of(reply)


@dataclass(frozen=True)
class RemoteHost:
    """The tools one remote_tools entry contributes, under their bare remote names, and what
    was left off its card with the reason."""

    alias: str
    tools: tuple[RemoteTool, ...]
    skipped: tuple[str, ...] = ()


def _unusable(descriptor: RemoteDescriptor) -> str | None:
    if (bad_name := unusable_name(descriptor.name)) is not None:
        return bad_name
    schema = descriptor.input_schema
    if not isinstance(schema, Mapping):
        return "its input schema is not a JSON object"
    if schema.get("type") != "object":
        return "its input schema's root type is not object"
    if not descriptor.description.strip():
        return "it has no description"
    return None


def import_card(
    alias: str,
    descriptors: Sequence[RemoteDescriptor],
    call: RemoteCall,
    *,
    include: ToolFilter | None = None,
    exclude: ToolFilter | None = None,
) -> RemoteHost:
    """The tools of one peer's card that this run may use: a descriptor the model API would
    refuse is left out with a reason (one bad definition would fail every model call), then the
    entry's include and exclude tool patterns apply to the remote names. Tag filters are
    dropped, since a card carries no tags; the configuration warns about include.tags."""
    include = ToolFilter(tools=include.tools) if include is not None else None
    exclude = ToolFilter(tools=exclude.tools) if exclude is not None else None
    tools: list[RemoteTool] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for descriptor in descriptors:
        reason = _unusable(descriptor)
        if reason is None and descriptor.name in seen:
            reason = "the card lists it more than once"
        if reason is not None:
            skipped.append(
                f'{remote_source_label(alias)}: tool "{descriptor.name}" is left out, since '
                f"{reason}"
            )
            continue
        seen.add(descriptor.name)
        if not is_selected(descriptor.name, (), include=include, exclude=exclude):
            continue
        schema = descriptor.input_schema
        assert schema is not None
        tools.append(
            RemoteTool(
                name=descriptor.name,
                remote_name=descriptor.name,
                alias=alias,
                description=descriptor.description,
                input_schema=dict(schema),
                call=call,
            )
        )
    return RemoteHost(alias=alias, tools=tuple(tools), skipped=tuple(skipped))


def name_remote_tools(hosts: Sequence[RemoteHost], taken: Set[str]) -> list[ToolSource]:
    """One source per host with every tool under its final name: the bare remote name unless
    ``taken`` (the local tools' names) has it or more than one host offers it, then
    ``<alias>_<name>``. A name that still occurs twice raises ToolCollisionError naming both."""
    offered = Counter(tool.remote_name for host in hosts for tool in host.tools)
    named: list[tuple[RemoteHost, list[RemoteTool]]] = []
    for host in hosts:
        tools = [
            tool
            if tool.remote_name not in taken and offered[tool.remote_name] == 1
            else tool.renamed(f"{host.alias}_{tool.remote_name}")
            for tool in host.tools
        ]
        named.append((host, tools))

    counts = Counter(tool.name for _, tools in named for tool in tools)
    counts.update(taken)
    for _, tools in named:
        for tool in tools:
            if counts[tool.name] > 1:
                raise ToolCollisionError(_collision(tool, named, taken))
    return [ToolSource(remote_source_label(host.alias), tools) for host, tools in named]


def _described(tool: RemoteTool) -> str:
    renamed = f' (its tool "{tool.remote_name}")' if tool.name != tool.remote_name else ""
    return f'tool "{tool.name}" from {remote_source_label(tool.alias)}{renamed}'


def _collision(
    tool: RemoteTool, named: Sequence[tuple[RemoteHost, list[RemoteTool]]], taken: Set[str]
) -> str:
    others = [
        other
        for _, tools in named
        for other in tools
        if other.name == tool.name and other is not tool
    ]
    if tool.name in taken:
        other_text = f'a tool of this agent also called "{tool.name}"'
    elif others:
        other_text = _described(others[0])
    else:
        other_text = f'another tool called "{tool.name}"'
    return (
        f"{_described(tool)} has the same name as {other_text}; exclude one of them under "
        f"remote_tools include or exclude, or give {remote_source_label(tool.alias)} another alias"
    )
