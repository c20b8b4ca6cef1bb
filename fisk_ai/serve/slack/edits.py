"""Edits of a turn's status message, paced to what Slack allows.

A status message changes as the run works (its phase, and the answer as the model writes it),
far faster than Slack takes edits. ``StatusEdits`` sends at most one edit per ``Pace``: the first
change goes out at once, and later ones wait until the pace allows the next edit and go as one,
each showing the turn as it is when it is sent, so the latest text wins. A Slack rate-limit
answer puts the next edit off for as long as Slack asked, and that edit carries the latest text.

The pace belongs to the thread rather than to one turn, so a thread's next turn keeps to it too.
Once the turn's ending is on its way no edit of its progress goes out any more: ``stop`` drops the
edit still waiting and waits for one already sent, and ``last`` sends the ending, paced like the
rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

__all__ = ["Edit", "Pace", "RateLimited", "StatusEdits"]

_LAST_TRIES = 3
"""Attempts at the ending's edit when Slack keeps asking to slow down."""

_log = logging.getLogger(__name__)

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
Edit = Callable[[], Awaitable[object]]
"""One edit of a status message, showing the turn as it is when it is sent."""


class RateLimited(Exception):
    """Slack answered an edit with 429; ``retry_after`` is the seconds its Retry-After asked for."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"rate limited for {retry_after:g} s")
        self.retry_after = retry_after


@dataclass
class Pace:
    """When a thread's status messages may next be edited."""

    ready_at: float = -math.inf


class StatusEdits:
    """The edits of one status message: ``edit`` sends the message as the turn stands when it
    is called, and raises ``RateLimited`` when Slack refuses it for now; two edits under one
    ``pace`` are at least ``interval`` seconds apart.

    ``clock`` and ``sleep`` are the time the pace is kept in (the event loop's, normally).
    """

    def __init__(
        self, edit: Edit, pace: Pace, *, interval: float, clock: Clock, sleep: Sleep
    ) -> None:
        self._edit = edit
        self._pace = pace
        self._interval = interval
        self._clock = clock
        self._sleep = sleep
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._sending = False
        self._stopped = False

    def changed(self) -> None:
        """The turn changed: an edit showing it goes out as soon as the pace allows."""
        if self._stopped:
            return
        self._changed.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._send_changes(), name="slack status edits"
            )

    async def stop(self) -> None:
        """Send no more edits of the turn's progress: one waiting is dropped, and one already
        sent is waited for, so nothing of it can land after what comes next."""
        self._stopped = True
        task, self._task = self._task, None
        if task is None:
            return
        if not self._sending:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def last(self, edit: Edit) -> None:
        """Send the turn's ending with ``edit`` once the pace allows; progress edits stop first."""
        await self.stop()
        for _ in range(_LAST_TRIES):
            await self._ready()
            if await self._attempt(edit):
                return
        _log.warning("Slack kept refusing the edit of a status message as too fast; gave up")

    async def _send_changes(self) -> None:
        while not self._stopped:
            await self._changed.wait()
            await self._ready()
            self._changed.clear()
            self._sending = True
            try:
                if not await self._attempt(self._edit):
                    self._changed.set()
            finally:
                self._sending = False

    async def _ready(self) -> None:
        while (wait := self._pace.ready_at - self._clock()) > 0:
            await self._sleep(wait)

    async def _attempt(self, edit: Edit) -> bool:
        """Whether the edit went out; a refusal as too fast puts the pace off."""
        try:
            await edit()
        except RateLimited as limited:
            self._pace.ready_at = self._clock() + max(limited.retry_after, self._interval)
            return False
        except Exception as error:
            # The edit reports its own failures; one it let through must not end the pacing.
            _log.warning("editing a Slack status message failed: %s", error)
        self._pace.ready_at = self._clock() + self._interval
        return True
