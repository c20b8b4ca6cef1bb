"""Cancelling a task of one's own and waiting for it to unwind, without swallowing a cancel
meant for oneself.

``task.cancel()`` followed by ``with suppress(CancelledError): await task`` cannot tell the
task's CancelledError from one delivered to the caller while it waits, so a stop of the caller
arriving then is lost and the caller runs on past it. Waiting with ``asyncio.wait`` raises only
the caller's own cancel.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["cancel_and_wait"]


async def cancel_and_wait(*tasks: asyncio.Future[Any]) -> None:
    """Cancel ``tasks`` and return once each has ended, raising what one raised other than its
    cancel; a cancel of the caller while it waits goes through."""
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks)
    for task in tasks:
        if not task.cancelled():
            task.result()
