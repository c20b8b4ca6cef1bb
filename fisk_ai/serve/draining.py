"""Serving until stopped: the endpoints of one `fisk serve` process, drained and stopped
together, and the two-stage interrupt on top.

The first interrupt (or a fault of the connection or of a channel) drains: every endpoint stops
taking work, and the prompts being answered run to their end. A second interrupt stops at once,
abandoning those prompts with an error to each caller. A fault drains too and then raises, so
the process exits non-zero and a supervisor restarts it.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from fisk_ai.errors import FiskError

if TYPE_CHECKING:
    from fisk_ai.a2a.nats import NatsTransport

__all__ = [
    "CHANNEL_DRAINING_LINE",
    "DRAINING_LINE",
    "STOPPED_AT_ONCE",
    "Endpoint",
    "ServedEndpoints",
    "serve_until_stopped",
]

DRAINING_LINE = "draining: the endpoints stop answering. Interrupt again to stop now"
CHANNEL_DRAINING_LINE = (
    "draining: no new work is taken and running work stops where it can resume. "
    "Interrupt again to stop now"
)
STOPPED_AT_ONCE = 130


class Endpoint(Protocol):
    """What `serve_until_stopped` needs of what it serves."""

    @property
    def identity(self) -> str: ...

    async def drain(self) -> None:
        """Take no new work, and return once the work it waits for has finished."""

    async def close(self) -> None:
        """Stop at once: abandon the work still running, which ends a drain under way."""


class Answering(Endpoint, Protocol):
    """An endpoint whose callers wait on each piece of work it took: the prompts channel."""

    async def wait_idle(self) -> None:
        """Return once no taken work is still running."""


class ServedEndpoints:
    """The endpoints of one `fisk serve` process, drained and stopped together.

    A drain stops every endpoint taking work first, then waits for the prompts being answered
    (their callers are waiting on the answer); tool calls already running are not waited for.
    Stopping at once abandons those prompts, each caller told with an error.
    """

    def __init__(self, identity: str, *, prompts: Answering | None, tools: Endpoint | None) -> None:
        self._identity = identity
        self._prompts = prompts
        self._endpoints: list[Endpoint] = [
            endpoint for endpoint in (prompts, tools) if endpoint is not None
        ]
        self._leaving: asyncio.Future[None] | None = None

    @property
    def identity(self) -> str:
        return self._identity

    async def drain(self) -> None:
        # Shielded: a stop arriving mid-way must not cut a service's unsubscribe short.
        await asyncio.shield(self._leave())
        if self._prompts is not None:
            await self._prompts.wait_idle()

    async def close(self) -> None:
        await self._leave()
        # Tool calls are left to end with the process, as a drain leaves them; the prompts'
        # callers are waiting on a terminal message, so their turns are abandoned explicitly.
        if self._prompts is not None:
            await self._prompts.close()

    def _leave(self) -> asyncio.Future[None]:
        """Every endpoint stops taking work, once however often it is asked."""
        if self._leaving is None:
            self._leaving = asyncio.ensure_future(self._drain_each())
        return self._leaving

    async def _drain_each(self) -> None:
        # Each endpoint leaves even when one before it could not (its connection is down): the
        # first failure is raised once all have tried.
        failure: Exception | None = None
        for endpoint in self._endpoints:
            try:
                await endpoint.drain()
            except Exception as error:
                failure = failure or error
        if failure is not None:
            raise failure


async def serve_until_stopped(
    server: Endpoint,
    transport: NatsTransport | None,
    *,
    draining_line: str = DRAINING_LINE,
    announce: Callable[[], None] | None = None,
    serving: asyncio.Future[None] | None = None,
) -> int:
    """Serve until the first interrupt or a fault, then drain; a second interrupt stops at
    once. A fault drains too and raises, so the process exits non-zero. ``announce`` runs once
    the interrupts are handled, so whoever it tells can interrupt at once. ``serving`` is the
    Server's work: ending with an error, it reports a channel's fault (the Server has drained
    itself by then). ``transport`` is the a2a connection whose fault drains too, None when the
    process connected none."""
    loop = asyncio.get_running_loop()
    drain_asked = asyncio.Event()
    stop_asked = asyncio.Event()

    def on_interrupt() -> None:
        if drain_asked.is_set():
            stop_asked.set()
            return
        print(draining_line, file=sys.stderr, flush=True)
        drain_asked.set()

    for signal_number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signal_number, on_interrupt)
    try:
        if announce is not None:
            announce()
        waits: set[asyncio.Future[Any]] = {asyncio.ensure_future(drain_asked.wait())}
        fault = transport.fault if transport is not None else None
        if fault is not None:
            waits.add(fault)
        if serving is not None:
            waits.add(serving)
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        failure = fault.result() if fault is not None and fault.done() else None
        for waiting in waits:
            if waiting is not fault and waiting is not serving:
                waiting.cancel()
        draining = asyncio.ensure_future(server.drain())
        stopping = asyncio.ensure_future(stop_asked.wait())
        await asyncio.wait({draining, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not draining.done():
            # Abandoning the work the drain waits for tells each waiting caller, and lets the
            # drain return rather than be cancelled part way through leaving the services.
            await server.close()
            await asyncio.wait({draining})
            return STOPPED_AT_ONCE
        stopping.cancel()
        leaving_failure = _failure_of(draining)
        if leaving_failure is not None:
            raise FiskError(
                f"draining {server.identity} could not reach the NATS server "
                f"({_reason(leaving_failure)}); the endpoints stop with the process; restart "
                "fisk serve once the NATS server is reachable"
            )
        channel_failure = _failure_of(serving)
        if failure is not None:
            raise FiskError(
                f"the a2a service for {server.identity} failed ({failure}) and was drained; "
                "restart fisk serve once the NATS server is reachable"
            )
        if channel_failure is not None:
            raise FiskError(
                f"a channel of {server.identity} failed ({channel_failure}) and was drained; "
                "restart fisk serve once what it reported is fixed"
            )
        return 0
    finally:
        for signal_number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signal_number)


def _reason(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _failure_of(serving: asyncio.Future[None] | None) -> BaseException | None:
    if serving is None or not serving.done() or serving.cancelled():
        return None
    return serving.exception()
