"""Importing the tools of the agents agent.yaml lists under remote_tools, over one NATS connection.

At run start the run connects once over ``nats_context``, reads every host's card and keeps the
connection open for the tools to borrow until the run ends. The run import is strict: a host that
does not answer fails the run, naming it, since a run quietly missing tools the operator listed
would answer a different question. ``fisk info`` imports leniently: it reports each host's state
and carries on.

The wait for a peer is ``expose.agent.a2a.request_timeout`` (120 s unless set), bounding a card
fetch and each gap between the messages answering a call. It is floored at three keepalive
intervals, so a peer that is busy running a tool is never given up on between two keepalives.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from fisk_ai import config
from fisk_ai.agent.application import tool_filter
from fisk_ai.errors import FiskError
from fisk_ai.tools.remote import (
    RemoteCall,
    RemoteCallFailed,
    RemoteHost,
    import_card,
    remote_source_label,
)

if TYPE_CHECKING:
    from fisk_ai.a2a.messages import Identity, ToolReply
    from fisk_ai.a2a.nats import NatsTransport
    from fisk_ai.a2a.transport import Transport

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "REQUEST_TIMEOUT_FLOOR",
    "HostStatus",
    "RemoteImport",
    "discover_remote_tools",
    "import_remote_tools",
    "remote_request_timeout",
]

DEFAULT_REQUEST_TIMEOUT = timedelta(seconds=120)
# Three of the serving side's ten-second keepalive intervals.
REQUEST_TIMEOUT_FLOOR = timedelta(seconds=30)


@dataclass(frozen=True)
class HostStatus:
    """One remote_tools entry as ``fisk info`` reports it: its tool count, or why it has none."""

    alias: str
    tool_count: int = 0
    unavailable: str = ""

    @property
    def line(self) -> str:
        if self.unavailable:
            return f"{self.alias}: unavailable ({self.unavailable})"
        return f"{self.alias}: {self.tool_count} tools"


@dataclass(frozen=True)
class RemoteImport:
    """What the remote_tools entries contribute: each answering host's tools (named by
    ``run_tool_set``), every host's status, and the warnings about cards' unusable tools."""

    hosts: tuple[RemoteHost, ...] = ()
    statuses: tuple[HostStatus, ...] = ()
    warnings: tuple[str, ...] = ()


def remote_request_timeout(cfg: config.Config) -> timedelta:
    """How long to wait for a peer's next message, from expose.agent.a2a.request_timeout."""
    a2a = cfg.expose.agent.a2a
    configured = a2a.request_timeout if a2a is not None else DEFAULT_REQUEST_TIMEOUT
    return max(configured, REQUEST_TIMEOUT_FLOOR)


@contextlib.asynccontextmanager
async def import_remote_tools(cfg: config.Config, *, strict: bool) -> AsyncIterator[RemoteImport]:
    """Discover every remote_tools host; the connection stays open (and the tools callable)
    until the block ends. ``strict`` raises FiskError naming the first host that cannot be
    imported; otherwise that host is reported as unavailable and skipped."""
    if not cfg.remote_tools:
        yield RemoteImport()
        return
    try:
        transport = await _connect(cfg)
    except FiskError as exc:
        if strict:
            raise
        yield RemoteImport(
            statuses=tuple(
                HostStatus(host.alias, unavailable=str(exc)) for host in cfg.remote_tools
            )
        )
        return
    try:
        yield await discover_remote_tools(cfg, transport, strict=strict)
    finally:
        await transport.close()


async def _connect(cfg: config.Config) -> NatsTransport:
    from fisk_ai.serve.connection import connect_transport

    return await connect_transport(
        cfg.nats_context or None,
        name=f"fisk-ai {cfg.identity}",
        purpose="for remote_tools",
        fix="nats_context",
    )


async def discover_remote_tools(
    cfg: config.Config, transport: Transport, *, strict: bool
) -> RemoteImport:
    """Read every remote_tools host's card over ``transport``, which the tools then borrow."""
    from fisk_ai.a2a.client import discover
    from fisk_ai.a2a.errors import A2AError
    from fisk_ai.a2a.messages import Identity

    timeout = remote_request_timeout(cfg)
    sender = Identity(name=cfg.identity)
    hosts: list[RemoteHost] = []
    statuses: list[HostStatus] = []
    warnings: list[str] = []
    for entry in cfg.remote_tools:
        try:
            card = await discover(transport, entry.name, timeout=timeout, sender=sender)
        except A2AError as exc:
            if strict:
                raise FiskError(
                    f"{remote_source_label(entry.alias)} cannot be imported: {exc}"
                ) from None
            statuses.append(HostStatus(entry.alias, unavailable=str(exc)))
            continue
        host = import_card(
            entry.alias,
            card.tools,
            _caller(transport, entry.name, timeout, sender),
            include=tool_filter(entry.include),
            exclude=tool_filter(entry.exclude),
        )
        hosts.append(host)
        statuses.append(HostStatus(entry.alias, tool_count=len(host.tools)))
        warnings += host.skipped
    return RemoteImport(tuple(hosts), tuple(statuses), tuple(warnings))


def _caller(
    transport: Transport, identity: str, timeout: timedelta, sender: Identity
) -> RemoteCall:
    from fisk_ai.a2a.client import call_tool
    from fisk_ai.a2a.errors import A2AError

    async def call(name: str, arguments: Mapping[str, Any]) -> ToolReply:
        try:
            return await call_tool(
                transport, identity, name, arguments, request_timeout=timeout, sender=sender
            )
        except A2AError as exc:
            raise RemoteCallFailed(str(exc)) from None

    return call
