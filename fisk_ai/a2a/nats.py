"""The a2a transport over a nats-py client, and the NATS micro service that serves discovery and
tools.

A ``NatsTransport`` either borrows a connection somebody else opened (and then never closes it)
or opens its own with ``NatsTransport.open`` (and closes it in ``close``). nats-py is imported
when a connection is opened or used, never when this module is imported.

``serve_service`` registers one NATS micro service per identity: the service name is the
identity, the identity is the queue group of every endpoint, and each endpoint is a plain
``Handler`` seeing a ``Delivery``, so a handler written against the ``Transport`` protocol serves
over NATS and over the in-memory transport alike. The service's version is ``0.0.0``, because the
micro protocol insists on SemVer and an application's version need not be one; the card carries
the real version.

nats-py 2.16.0 writes a ``flush()`` PING straight to the socket, ahead of commands still queued,
so every subscription yields to the event loop once before flushing: otherwise another
connection's request can find nobody subscribed yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from fisk_ai.a2a.errors import NoResponders, RequestTimeout, TransportClosed
from fisk_ai.a2a.transport import Delivery, Handler, Subscription, reply_failure

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient
    from nats.aio.msg import Msg

__all__ = [
    "SERVICE_DESCRIPTION",
    "SERVICE_VERSION",
    "NatsTransport",
    "ServiceEndpoint",
    "ServiceHandle",
    "ServiceHost",
]

SERVICE_VERSION = "0.0.0"
SERVICE_DESCRIPTION = "fisk-ai a2a tool server"

_log = logging.getLogger(__name__)

# How nats-py words a server's -ERR for a subject the user's permissions deny, lower-cased.
_PERMISSIONS_VIOLATION = "permissions violation"
_SUBSCRIPTION_REFUSED = "permissions violation for subscription"


@dataclass(frozen=True)
class ServiceEndpoint:
    """One endpoint of a micro service: its name in the service's INFO, and where it listens."""

    name: str
    subject: str
    handler: Handler


class ServiceHandle(Protocol):
    """A running service: ``stop`` takes its endpoints out of their queue group."""

    @property
    def stopped(self) -> bool: ...

    async def stop(self) -> None: ...


@runtime_checkable
class ServiceHost(Protocol):
    """A transport that can register a micro service, as the NATS binding can."""

    async def serve_service(
        self, identity: str, endpoints: Sequence[ServiceEndpoint], *, description: str = ...
    ) -> ServiceHandle: ...


class _NatsSubscription:
    def __init__(
        self,
        subscription: Any,
        subject: str,
        queue: str,
        release: Callable[[_NatsSubscription], None],
    ) -> None:
        self._subscription = subscription
        self._subject = subject
        self._queue = queue
        self._release = release

    @property
    def subject(self) -> str:
        return self._subject

    @property
    def queue(self) -> str:
        return self._queue

    async def unsubscribe(self) -> None:
        from nats.errors import BadSubscriptionError, ConnectionClosedError

        # The transport lets go first: a served prompt's cancel and elicit subscriptions (and
        # through their handlers the whole turn) must not outlive it, whatever the connection.
        self._release(self)
        with contextlib.suppress(BadSubscriptionError, ConnectionClosedError):
            await self._subscription.unsubscribe()


class _MicroService:
    def __init__(self, service: Any) -> None:
        self._service = service

    @property
    def stopped(self) -> bool:
        return bool(self._service.stopped.is_set())

    async def stop(self) -> None:
        from nats.errors import ConnectionClosedError
        from nats.errors import Error as NatsError

        if self.stopped:
            return
        try:
            await self._service.stop()
        except ConnectionClosedError:
            self._service.stopped.set()
        except (OSError, TimeoutError, NatsError) as error:
            # The server is unreachable (a reset socket, a flush that times out): the service
            # is gone from its point of view; say so once, as an a2a error.
            self._service.stopped.set()
            raise TransportClosed(
                f"the NATS server could not be told the service is leaving ({error!r})"
            ) from None


def _delivery(msg: Msg) -> Delivery:
    return Delivery(msg.subject, msg.data, msg.reply or "", msg.headers or {})


def _wrap(handler: Handler, subject: str) -> Any:
    async def receive(msg: Msg) -> None:
        try:
            await handler(_delivery(msg))
        except Exception:
            # A handler's failure is its own to report; the subscription carries on.
            _log.exception("a handler for %s failed", subject)

    return receive


class NatsTransport:
    """The a2a ``Transport`` over one nats-py connection."""

    def __init__(self, client: NatsClient, *, owned: bool = False) -> None:
        self._client = client
        self._owned = owned
        self._subscriptions: set[_NatsSubscription] = set()
        self._services: list[_MicroService] = []
        self._closed = False
        self._fault: asyncio.Future[str] | None = None

    @classmethod
    async def open(cls, options: Mapping[str, Any], *, name: str) -> NatsTransport:
        """Connect with nats-py ``connect()`` keyword ``options`` (as
        ``fisk_ai.broker.context.connect_options`` gives them); the transport owns the connection
        and reports its loss through ``fault``."""
        import nats

        fault: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        servers = options.get("servers")
        server_count = len(servers) if isinstance(servers, list | tuple) and servers else 1
        first_failures = 0
        connected = False

        def note(reason: str) -> None:
            if not fault.done():
                fault.set_result(reason)

        async def on_error(error: Exception) -> None:
            from nats.errors import SlowConsumerError

            nonlocal first_failures
            if not connected:
                # nats-py would retry a first connection for minutes; a process starting up
                # should say at once that no server of its context answers. Raising from this
                # callback ends connect() with the error.
                first_failures += 1
                if first_failures >= server_count:
                    raise error
                return
            if isinstance(error, SlowConsumerError):
                note(f"the subscription on {error.subject} fell behind and lost messages")
            elif _SUBSCRIPTION_REFUSED in str(error).lower():
                # The server keeps the connection but delivers nothing on the subject, so the
                # endpoint behind it is deaf while the process looks healthy.
                note(f"the NATS server refused a subscription ({error})")
            elif _PERMISSIONS_VIOLATION in str(error).lower():
                # A refused publish loses that one message; it is no fault of the service, and
                # a caller naming an inbox the worker may not reply to must not stop it.
                _log.warning("the NATS server refused a message: %s", error)
            else:
                _log.debug("NATS connection error: %s", error)

        async def on_closed() -> None:
            note("the NATS connection closed")

        # Once connected, nats-py's own reconnect policy (like nats.go's) rides out a short
        # outage; when it gives up, the connection closes and that is reported as a fault.
        client = await nats.connect(**options, name=name, error_cb=on_error, closed_cb=on_closed)
        connected = True
        transport = cls(client, owned=True)
        transport._fault = fault
        return transport

    @property
    def client(self) -> NatsClient:
        return self._client

    @property
    def fault(self) -> asyncio.Future[str] | None:
        """Resolved with a reason when an owned connection is lost or a subscription drops
        messages; None for a borrowed connection, whose owner watches it."""
        return self._fault

    def new_inbox(self) -> str:
        return str(self._client.new_inbox())

    async def request(
        self,
        subject: str,
        data: bytes,
        *,
        timeout: timedelta,  # noqa: ASYNC109 - expiry is reported as RequestTimeout
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        from nats.errors import NoRespondersError
        from nats.errors import TimeoutError as NatsTimeout

        self._check_open()
        try:
            msg = await self._client.request(
                subject,
                data,
                timeout=timeout.total_seconds(),
                headers=dict(headers) if headers else None,
            )
        except NoRespondersError:
            raise NoResponders(
                f"nothing answers on {subject}; check that the agent is running and that its "
                "identity matches the one addressed"
            ) from None
        except NatsTimeout:
            raise RequestTimeout(
                f"no reply came from {subject} within {timeout.total_seconds():g}s; "
                "check that the agent is running or allow it longer"
            ) from None
        failure = reply_failure(_delivery(msg), subject)
        if failure is not None:
            raise failure
        return bytes(msg.data)

    async def publish(
        self,
        subject: str,
        data: bytes,
        *,
        reply: str = "",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._check_open()
        await self._client.publish(
            subject, data, reply=reply, headers=dict(headers) if headers else None
        )

    async def subscribe(self, subject: str, handler: Handler, *, queue: str = "") -> Subscription:
        self._check_open()
        raw = await self._client.subscribe(subject, queue=queue, cb=_wrap(handler, subject))
        await self._settle()
        subscription = _NatsSubscription(raw, subject, queue, self._subscriptions.discard)
        self._subscriptions.add(subscription)
        return subscription

    @property
    def subscription_count(self) -> int:
        """Subscriptions made and not yet ended: a served prompt's are ended with its turn."""
        return len(self._subscriptions)

    async def serve_service(
        self,
        identity: str,
        endpoints: Sequence[ServiceEndpoint],
        *,
        description: str = SERVICE_DESCRIPTION,
    ) -> ServiceHandle:
        """Register the micro service ``identity`` with ``endpoints``, the identity as their
        queue group, and return once every endpoint is subscribed on the server."""
        from nats.micro import add_service

        self._check_open()
        service = await add_service(
            self._client,
            name=identity,
            version=SERVICE_VERSION,
            description=description,
            queue_group=identity,
        )
        for endpoint in endpoints:

            async def handle(request: Any, handler: Handler = endpoint.handler) -> None:
                await handler(_delivery(request._msg))

            await service.add_endpoint(name=endpoint.name, subject=endpoint.subject, handler=handle)
        await self._settle()
        running = _MicroService(service)
        self._services.append(running)
        return running

    async def close(self) -> None:
        """End this transport's subscriptions and services; close the connection only when
        this transport opened it."""
        if self._closed:
            return
        self._closed = True
        # Whatever the connection's state: a server already gone needs no goodbye.
        for service in self._services:
            with contextlib.suppress(TransportClosed):
                await service.stop()
        for subscription in list(self._subscriptions):
            with contextlib.suppress(OSError):
                await subscription.unsubscribe()
        if self._owned and not self._client.is_closed:
            # Closing on purpose is not a fault.
            if self._fault is not None and not self._fault.done():
                self._fault.cancel()
            with contextlib.suppress(OSError):
                await self._client.close()

    async def _settle(self) -> None:
        await asyncio.sleep(0)
        await self._client.flush()

    def _check_open(self) -> None:
        if self._closed or self._client.is_closed:
            raise TransportClosed("the a2a connection is closed; open a new one")
