"""Telling the multiplexer around this process whether the agent is working, blocked or idle.

A person watching several agent panes cannot tell from the output which one wants them, so the
agent says so. Reporting is best effort: ``Reporter.report`` returns at once, one background task
delivers the newest pending report (a newer one replaces an unsent older one), and a failed or
slow delivery is logged at debug and dropped. Nothing here may fail a run.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from dataclasses import dataclass
from typing import Protocol

from fisk_ai.util.sanitize import single_line

__all__ = [
    "REASON_LIMIT",
    "Multiplexer",
    "PaneReport",
    "PaneState",
    "Reporter",
    "pane_title",
]

_log = logging.getLogger(__name__)

REASON_LIMIT = 120
_IDENTITY_LIMIT = 60


class PaneState(enum.StrEnum):
    """What the agent in the pane is doing, as the multiplexer shows it."""

    WORKING = "working"
    BLOCKED = "blocked"
    IDLE = "idle"


@dataclass(frozen=True)
class PaneReport:
    """One report as an adapter delivers it: already sanitised, reason empty unless blocked."""

    state: PaneState
    title: str
    reason: str = ""


class Multiplexer(Protocol):
    """One way of telling a multiplexer about the pane this process runs in."""

    @property
    def name(self) -> str: ...

    async def deliver(self, report: PaneReport) -> None:
        """Send the report; raise on failure (the reporter drops it)."""
        ...

    async def restore(self) -> None:
        """Take back what the reports set, so the pane no longer reads as a fisk agent once
        this process is gone; raise on failure (the reporter drops it)."""
        ...


def pane_title(identity: str, state: PaneState) -> str:
    """The pane label: ``fisk:<identity> <state>``, or ``fisk <state>`` without an identity."""
    name = single_line(identity, _IDENTITY_LIMIT)
    return f"fisk:{name} {state.value}" if name else f"fisk {state.value}"


class Reporter:
    """Reports the agent's state to the multiplexer, or to nobody when ``multiplexer`` is None.

    Call ``report`` from the event loop that runs the agent; await ``aclose`` before the loop
    ends so the last report gets a bounded chance to arrive.
    """

    def __init__(
        self,
        identity: str,
        multiplexer: Multiplexer | None,
        *,
        delivery_timeout: float = 2.0,
        close_timeout: float = 1.0,
    ) -> None:
        self._identity = identity
        self._multiplexer = multiplexer
        self._delivery_timeout = delivery_timeout
        self._close_timeout = close_timeout
        self._pending: PaneReport | None = None
        self._last_delivered: PaneReport | None = None
        self._sender: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        self._settled.set()
        self._closed = False

    @property
    def multiplexer(self) -> Multiplexer | None:
        return self._multiplexer

    def report(self, state: PaneState, reason: str = "") -> None:
        """Queue a report and return without waiting for it; never raises."""
        try:
            self._queue(state, reason)
        except Exception as error:
            _log.debug("pane report dropped: %s", error)

    async def flush(self) -> None:
        """Wait until every report made so far was delivered, dropped or superseded."""
        await self._settled.wait()

    async def aclose(self) -> None:
        """Stop taking reports, let the last one finish, then give the pane back (its title and
        options as before the first report), all within ``close_timeout`` seconds."""
        self._closed = True
        sender = self._sender
        if sender is not None:
            _, unfinished = await asyncio.wait([sender], timeout=self._close_timeout)
            if unfinished:
                sender.cancel()
                await asyncio.wait([sender])
                self._settled.set()
        multiplexer = self._multiplexer
        if multiplexer is None or self._last_delivered is None:
            return
        try:
            async with asyncio.timeout(self._close_timeout):
                await multiplexer.restore()
        except Exception as error:
            _log.debug("%s pane not given back: %s", multiplexer.name, error)

    def _queue(self, state: PaneState, reason: str) -> None:
        multiplexer = self._multiplexer
        if multiplexer is None or self._closed:
            return
        kept_reason = single_line(reason, REASON_LIMIT) if state is PaneState.BLOCKED else ""
        self._pending = PaneReport(
            state=state, title=pane_title(self._identity, state), reason=kept_reason
        )
        if self._sender is None:
            loop = asyncio.get_running_loop()
            self._settled.clear()
            self._sender = loop.create_task(
                self._send_pending(multiplexer), name=f"fisk-multiplex-{multiplexer.name}"
            )

    async def _send_pending(self, multiplexer: Multiplexer) -> None:
        try:
            while (report := self._pending) is not None:
                self._pending = None
                if report == self._last_delivered:
                    continue
                try:
                    async with asyncio.timeout(self._delivery_timeout):
                        await multiplexer.deliver(report)
                except Exception as error:
                    _log.debug("%s pane report dropped: %s", multiplexer.name, error)
                else:
                    self._last_delivered = report
        finally:
            self._sender = None
            self._settled.set()
