"""An in-memory transport: the same bytes as over NATS, between tasks of one event loop.

A ``InProcessBroker`` stands in for the server and each ``connect()`` for one client connection, so
a test (or a local run without a nats-server binary) wires an agent and its caller exactly as it
would over NATS. It keeps the behaviours the protocol leans on: wildcard subjects, a queue group
handing each message to one member in turn, handlers run one message at a time per subscription,
and an empty status-503 reply for a message sent with a reply subject to nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Mapping
from datetime import timedelta

from fisk_ai.a2a.errors import RequestTimeout, TransportClosed
from fisk_ai.a2a.transport import (
    NO_RESPONDERS_STATUS,
    STATUS_HEADER,
    Delivery,
    Handler,
    Subscription,
    reply_failure,
)
from fisk_ai.util.cancelling import cancel_and_wait
from fisk_ai.util.ids import new_ksuid

__all__ = ["InProcessBroker", "InProcessTransport"]

_log = logging.getLogger(__name__)

_INBOX_PREFIX = "_INBOX."


def _subject_matches(pattern: str, subject: str) -> bool:
    wanted = pattern.split(".")
    given = subject.split(".")
    for position, part in enumerate(wanted):
        if part == ">":
            return len(given) > position
        if position >= len(given) or (part != "*" and part != given[position]):
            return False
    return len(wanted) == len(given)


class _InProcessSubscription:
    def __init__(
        self,
        broker: InProcessBroker,
        owner: InProcessTransport,
        subject: str,
        queue: str,
        handler: Handler,
    ) -> None:
        self._broker = broker
        self._owner = owner
        self._subject = subject
        self._queue = queue
        self._handler = handler
        self._pending: asyncio.Queue[Delivery | None] = asyncio.Queue()
        self._task = asyncio.get_running_loop().create_task(
            self._deliver(), name=f"memory-subscription {subject}"
        )

    @property
    def subject(self) -> str:
        return self._subject

    @property
    def queue(self) -> str:
        return self._queue

    def offer(self, delivery: Delivery) -> None:
        self._pending.put_nowait(delivery)

    async def unsubscribe(self) -> None:
        self._stop()

    def _stop(self) -> None:
        self._broker.forget(self)
        self._owner.forget(self)
        while not self._pending.empty():
            self._pending.get_nowait()
        self._pending.put_nowait(None)

    async def stop_now(self) -> None:
        """Stop, abandoning a message still being handled unless the handler is the caller."""
        self._stop()
        if self._task is asyncio.current_task() or self._task.done():
            return
        await cancel_and_wait(self._task)

    async def _deliver(self) -> None:
        while (delivery := await self._pending.get()) is not None:
            try:
                await self._handler(delivery)
            except Exception:
                # A handler's failure is the handler's to report; the subscription carries on,
                # as a NATS subscription does.
                _log.exception("a handler for %s failed", self._subject)


class InProcessBroker:
    """Routes messages between the connections made from it."""

    def __init__(self) -> None:
        self._subscriptions: list[_InProcessSubscription] = []
        self._turns: dict[tuple[str, str], itertools.count[int]] = {}
        self._connections: list[InProcessTransport] = []

    def connect(self) -> InProcessTransport:
        connection = InProcessTransport(self)
        self._connections.append(connection)
        return connection

    async def close(self) -> None:
        """Close every connection made from this broker, as a server shutting down would."""
        for connection in self._connections:
            await connection.close()

    def add(self, subscription: _InProcessSubscription) -> None:
        self._subscriptions.append(subscription)

    def forget(self, subscription: _InProcessSubscription) -> None:
        with contextlib.suppress(ValueError):
            self._subscriptions.remove(subscription)

    def route(self, delivery: Delivery) -> int:
        """Hand ``delivery`` to its subscribers; the number of subscriptions that got it."""
        matching = [
            sub for sub in self._subscriptions if _subject_matches(sub.subject, delivery.subject)
        ]
        groups: dict[tuple[str, str], list[_InProcessSubscription]] = {}
        receivers: list[_InProcessSubscription] = []
        for subscription in matching:
            if subscription.queue:
                groups.setdefault((subscription.subject, subscription.queue), []).append(
                    subscription
                )
            else:
                receivers.append(subscription)
        for key, members in groups.items():
            turn = next(self._turns.setdefault(key, itertools.count()))
            receivers.append(members[turn % len(members)])
        for receiver in receivers:
            receiver.offer(delivery)
        return len(receivers)


class InProcessTransport:
    """One connection to a ``InProcessBroker``; a ``Transport``."""

    def __init__(self, broker: InProcessBroker) -> None:
        self._broker = broker
        self._subscriptions: list[_InProcessSubscription] = []
        self._closed = False

    def new_inbox(self) -> str:
        return _INBOX_PREFIX + new_ksuid()

    async def request(
        self,
        subject: str,
        data: bytes,
        *,
        timeout: timedelta,  # noqa: ASYNC109 - expiry is reported as RequestTimeout
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        self._check_open()
        replies: asyncio.Queue[Delivery] = asyncio.Queue()

        async def keep(delivery: Delivery) -> None:
            replies.put_nowait(delivery)

        inbox = await self.subscribe(self.new_inbox(), keep)
        try:
            await self.publish(subject, data, reply=inbox.subject, headers=headers)
            try:
                async with asyncio.timeout(timeout.total_seconds()):
                    reply = await replies.get()
            except TimeoutError:
                raise RequestTimeout(
                    f"no reply came from {subject} within {timeout.total_seconds():g}s; "
                    "check that the agent is running or allow it longer"
                ) from None
        finally:
            await inbox.unsubscribe()
        failure = reply_failure(reply, subject)
        if failure is not None:
            raise failure
        return reply.data

    async def publish(
        self,
        subject: str,
        data: bytes,
        *,
        reply: str = "",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._check_open()
        delivered = self._broker.route(Delivery(subject, bytes(data), reply, headers or {}))
        if delivered == 0 and reply:
            self._broker.route(Delivery(reply, b"", "", {STATUS_HEADER: NO_RESPONDERS_STATUS}))

    async def subscribe(self, subject: str, handler: Handler, *, queue: str = "") -> Subscription:
        self._check_open()
        subscription = _InProcessSubscription(self._broker, self, subject, queue, handler)
        self._subscriptions.append(subscription)
        self._broker.add(subscription)
        return subscription

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for subscription in list(self._subscriptions):
            await subscription.stop_now()

    def forget(self, subscription: _InProcessSubscription) -> None:
        with contextlib.suppress(ValueError):
            self._subscriptions.remove(subscription)

    @property
    def subscription_count(self) -> int:
        """Subscriptions made and not yet ended."""
        return len(self._subscriptions)

    def _check_open(self) -> None:
        if self._closed:
            raise TransportClosed("the a2a connection is closed; open a new one")
