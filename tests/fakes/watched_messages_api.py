"""The fake Messages API, watched: a test can wait for a request to arrive, and a request held
with ``hold`` is let go when the fake stops, so a test may stop a run while a reply never comes.

    with WatchedMessagesAPI(turns) as api:
        api.hold(1)                 # the first reply never comes
        running = asyncio.create_task(runner.start("go"))
        await api.arrived()         # the first request has reached the fake
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Sequence
from http.server import ThreadingHTTPServer
from typing import Any, Self

from tests.fakes.messages_api import FakeMessagesAPI, Turn
from tests.patience import DEADLINE

__all__ = ["HANG_GUARD", "WatchedMessagesAPI"]

HANG_GUARD = DEADLINE
"""How long a test waits on something that happens at once before it calls the wait a hang."""


class WatchedMessagesAPI(FakeMessagesAPI):
    """The fake Messages API, telling each time a request has arrived (before it is answered,
    so a held request is seen arriving), and letting every held request go when it stops."""

    def __init__(self, turns: Sequence[Turn] = (), *, api_key: str | None = None) -> None:
        super().__init__(turns, api_key=api_key)
        self._arrivals = threading.Semaphore(0)
        self._releases: list[threading.Event] = []
        self._server.handle_error = self._unless_the_caller_left  # type: ignore[method-assign]

    def __enter__(self) -> Self:
        self.start()
        return self

    def hold(self, request_number: int) -> threading.Event:
        release = super().hold(request_number)
        self._releases.append(release)
        return release

    def stop(self) -> None:
        # A held request would keep its server thread, and so the shutdown, waiting.
        for release in self._releases:
            release.set()
        super().stop()

    def _answer(
        self, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, dict[str, Any], int]:
        self._arrivals.release()
        return super()._answer(path, headers, body)

    def _unless_the_caller_left(self, request: Any, client_address: Any) -> None:
        # A held reply let go after its caller stopped waiting finds the connection closed.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        ThreadingHTTPServer.handle_error(self._server, request, client_address)

    async def arrived(self) -> None:
        """Return once the next request (in order) has reached the fake."""
        if not await asyncio.to_thread(self._arrivals.acquire, timeout=HANG_GUARD):
            raise AssertionError("the model was never called")
