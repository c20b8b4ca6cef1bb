"""The reply set: the numbered messages a serving engine answers one request with.

Both engines, the prompts channel and the served tools, answer a request with an ack, then what
the work produces, then one message ending the set. The messages are numbered from 1 without
gaps: the number advances only after a publish succeeded, so a failed publish leaves no hole.
One writer at a time: the lock orders a run's events, its questions, its keepalives and the
message ending the set.

Each message carries the W3C ``traceparent`` of the span current where it is sent, or, where none
is (events published by their own task, the message ending the set after the run), the run's
root span from the turn's trace record, so a caller can hang what it received off the worker's
trace. With telemetry off there is neither and the field is left out.

A message over the size cap has its prose cut short rather than being dropped, since a dropped
message would leave a hole the caller cannot tell from a lost one.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

from fisk_ai.a2a.codec import DEFAULT_MAX_MESSAGE_SIZE, encode
from fisk_ai.a2a.errors import A2AError, MessageTooLarge
from fisk_ai.a2a.messages import (
    Ack,
    EventText,
    EventToolCall,
    EventToolResult,
    Header,
    Identity,
    Message,
    ReplyHeader,
    TerminalError,
    TerminalResult,
    ToolReply,
    reply_header,
)
from fisk_ai.a2a.transport import Delivery, Transport, service_error_headers
from fisk_ai.telemetry import TurnTrace, current_traceparent

__all__ = ["Reply", "ReplySet", "answer_inbox", "encode_fitting", "refuse_delivery"]

Reply = Callable[[ReplyHeader], Message]
"""Builds one message of a reply set from the framing its place in the set gives it."""

_log = logging.getLogger(__name__)


class ReplySet:
    """The messages answering ``request``, published to ``inbox`` as ``sender``."""

    def __init__(
        self,
        transport: Transport,
        request: Header,
        inbox: str,
        sender: Identity,
        *,
        max_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        trace: TurnTrace | None = None,
    ) -> None:
        self.trace = trace if trace is not None else TurnTrace()
        """The turn's trace record, which the run fills in; the fallback traceparent."""
        self._transport = transport
        self._request = request
        self._inbox = inbox
        self._sender = sender
        self._max_size = max_size
        self._sequence = 1
        self._lock = asyncio.Lock()
        self.last_sent = asyncio.get_running_loop().time()
        """When the last message went out, on the event loop's clock."""

    @property
    def request(self) -> Header:
        return self._request

    @property
    def sender(self) -> Identity:
        """Who answers: the serving agent."""
        return self._sender

    async def send(self, build: Reply) -> bool:
        """Publish the next message; False when it could not be built or sent (logged)."""
        async with self._lock:
            try:
                header = reply_header(self._request, sender=self._sender, sequence=self._sequence)
                message = build(header)
                traceparent = current_traceparent() or self.trace.traceparent
                if traceparent:
                    message = message.model_copy(update={"traceparent": traceparent})
                data = encode_fitting(message, self._max_size)
                await self._transport.publish(self._inbox, data)
            except Exception:
                _log.exception("answering request %s failed", self._request.request)
                return False
            self._sequence += 1
            self.last_sent = asyncio.get_running_loop().time()
            return True

    async def refuse(self, reason: str, ending: Reply) -> None:
        """A refusing ack, then ``ending``: an ack on its own closes nothing, so a caller
        holding only a refusal would wait to its deadline."""
        if await self.send(lambda header: Ack(**header, accepted=False, reason=reason)):
            await self.send(ending)


def encode_fitting(message: Message, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> bytes:
    """The message's bytes; the prose of a message over ``max_size`` is halved until it fits,
    and a message with no prose to cut raises ``MessageTooLarge``."""
    try:
        return encode(message, max_size=max_size)
    except MessageTooLarge:
        trim = _trimmer(message)
        if trim is None:
            raise
    text, rebuild = trim
    while True:
        text = text[: len(text) // 2]
        try:
            return encode(rebuild(text), max_size=max_size)
        except MessageTooLarge:
            if not text:
                raise


def _trimmer(message: Message) -> tuple[str, Callable[[str], Message]] | None:
    """The prose of ``message`` that may be cut, and how to rebuild the message around less."""
    match message:
        case TerminalResult():
            return message.text, lambda text: message.model_copy(update={"text": text})
        case TerminalError():
            return message.error, lambda text: message.model_copy(update={"error": text})
        case EventText():
            return message.block.text, lambda text: message.model_copy(
                update={"block": message.block.model_copy(update={"text": text})}
            )
        case EventToolCall():
            # The arguments are cut as their JSON text, which the caller reads under one key;
            # the argument vector built from the whole arguments would no longer match them.
            return json.dumps(message.block.input), lambda text: message.model_copy(
                update={
                    "block": message.block.model_copy(
                        update={"input": {"truncated_input": text}, "argv": ()}
                    )
                }
            )
        case EventToolResult():
            return message.block.output, lambda text: message.model_copy(
                update={"block": message.block.model_copy(update={"output": text})}
            )
        case ToolReply():
            # A tool reply says it lost the end of its output, as a truncated capture does.
            executed = message.exec
            marked = None if executed is None else executed.model_copy(update={"truncated": True})
            return message.output, lambda text: message.model_copy(
                update={"output": text, "exec": marked}
            )
        case _:
            return None


async def answer_inbox(
    transport: Transport, inbox: str, data: bytes, *, headers: dict[str, str] | None = None
) -> None:
    """Publish a single answer outside any reply set; a failure is only logged, since nobody is
    left to tell."""
    try:
        await transport.publish(inbox, data, headers=headers)
    except Exception:
        _log.exception("answering on %s failed", inbox)


async def refuse_delivery(transport: Transport, delivery: Delivery, error: A2AError) -> None:
    """Answer a message that cannot be taken with the NATS service error headers; one that came
    with nowhere to reply gets nothing."""
    if delivery.reply:
        await answer_inbox(transport, delivery.reply, b"", headers=service_error_headers(error))
