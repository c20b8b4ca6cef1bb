"""Calling another agent's served tools: reading its card and calling one tool.

A card fetch is one request and one reply, so its timeout covers the whole fetch. A tool call is
answered by a reply set (an ack, keepalives while the tool runs, then the tool.reply), so its
``request_timeout`` bounds the gap between two messages rather than the call: the caller waits as
long as keepalives arrive, and the serving side's tool_timeout ends a call that does not finish.
Nobody answering, or no message within the timeout, is reported as the remote agent being
unavailable.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from fisk_ai import telemetry
from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import A2AError, InvalidMessage, NoResponders, RequestTimeout
from fisk_ai.a2a.messages import (
    Ack,
    DiscoveryReply,
    DiscoveryRequest,
    Identity,
    ToolReply,
    ToolRequest,
    new_request,
)
from fisk_ai.a2a.transport import (
    Delivery,
    Transport,
    discovery_subject,
    reply_failure,
    tool_subject,
)
from fisk_ai.a2a.vocabulary import Direction
from fisk_ai.telemetry import current_traceparent

__all__ = ["DEFAULT_CLIENT_IDENTITY", "DEFAULT_DISCOVERY_TIMEOUT", "call_tool", "discover"]

DEFAULT_CLIENT_IDENTITY = Identity(name="fisk-ai")
DEFAULT_DISCOVERY_TIMEOUT = timedelta(seconds=30)


def _unavailable(identity: str, subject: str, why: str) -> str:
    return (
        f"remote agent unavailable: {why} on {subject}; check that agent {identity} is running "
        "and that its identity is spelled the same here"
    )


async def discover(
    transport: Transport,
    identity: str,
    *,
    timeout: timedelta = DEFAULT_DISCOVERY_TIMEOUT,  # noqa: ASYNC109 - reported as RequestTimeout
    sender: Identity = DEFAULT_CLIENT_IDENTITY,
) -> DiscoveryReply:
    """The card agent ``identity`` answers discovery with."""
    subject = discovery_subject(identity)
    request = new_request(
        DiscoveryRequest,
        traceparent=current_traceparent() or None,
        sender=sender,
        recipient=Identity(name=identity),
    )
    try:
        data = await transport.request(subject, encode(request), timeout=timeout)
    except NoResponders:
        raise NoResponders(_unavailable(identity, subject, "nothing answers")) from None
    except RequestTimeout:
        raise RequestTimeout(
            _unavailable(identity, subject, f"no card came within {timeout.total_seconds():g}s")
        ) from None
    card = decode(data, direction=Direction.TO_CALLER)
    if not isinstance(card, DiscoveryReply):
        raise InvalidMessage(
            f"agent {identity} answered discovery with {card.protocol} instead of a card"
        )
    return card


async def call_tool(
    transport: Transport,
    identity: str,
    name: str,
    input: Mapping[str, Any],
    *,
    request_timeout: timedelta,
    sender: Identity = DEFAULT_CLIENT_IDENTITY,
) -> ToolReply:
    """Call tool ``name`` served by agent ``identity`` and return its reply. A call the agent
    refused (unknown tool, every slot busy, draining) is a reply with ``is_error`` and a
    ``code``, not an exception; a peer that does not answer at all raises."""
    with telemetry.current().remote_tool(identity, name) as span:
        reply = await _call_tool(
            transport, identity, name, input, request_timeout=request_timeout, sender=sender
        )
        if reply.is_error:
            span.fail(telemetry.TOOL_FAILED)
        return reply


async def _call_tool(
    transport: Transport,
    identity: str,
    name: str,
    input: Mapping[str, Any],
    *,
    request_timeout: timedelta,
    sender: Identity,
) -> ToolReply:
    subject = tool_subject(identity)
    request = new_request(
        ToolRequest,
        traceparent=current_traceparent() or None,
        sender=sender,
        recipient=Identity(name=identity),
        name=name,
        input=dict(input),
    )
    arrived: asyncio.Queue[Delivery] = asyncio.Queue()

    async def keep(delivery: Delivery) -> None:
        arrived.put_nowait(delivery)

    # The inbox is subscribed before the request goes out, on the same connection, so the first
    # answer cannot arrive before anybody listens for it.
    inbox = await transport.subscribe(transport.new_inbox(), keep)
    try:
        await transport.publish(subject, encode(request), reply=inbox.subject)
        while True:
            try:
                async with asyncio.timeout(request_timeout.total_seconds()):
                    delivery = await arrived.get()
            except TimeoutError:
                raise RequestTimeout(
                    _unavailable(
                        identity,
                        subject,
                        f"nothing came for {request_timeout.total_seconds():g}s",
                    )
                ) from None
            failure = reply_failure(delivery, subject)
            if isinstance(failure, NoResponders):
                raise NoResponders(_unavailable(identity, subject, "nothing answers")) from None
            if failure is not None:
                raise failure
            message = decode(delivery.data, direction=Direction.TO_CALLER)
            if message.request != request.request:
                continue
            if isinstance(message, ToolReply):
                return message
            if isinstance(message, Ack) and not message.accepted:
                # The refusal's reason also comes in the tool.reply that follows.
                continue
    finally:
        with contextlib.suppress(A2AError):
            await inbox.unsubscribe()
