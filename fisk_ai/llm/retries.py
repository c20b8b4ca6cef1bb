"""Telling whoever waits on a model call that the provider is about to try it again.

A provider retries a call the API turned away for the moment (429, 529, another 5xx, a lost
connection) on its own. The agent loop wants to say so while it happens, with the wait: it sets
a listener around the call, and the provider reports each retry to it. The listener travels in a
context variable down the call's own task, so the ``Provider`` interface stays as it is and a
provider that never retries has nothing to do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryNotice:
    """The provider will try the call again after ``wait_seconds``."""

    attempt: int
    """The attempt about to be made: 2 for the first retry."""
    attempts: int
    """How many attempts the call is allowed in all."""
    wait_seconds: float
    status: int = 0
    """The HTTP status that was turned away; 0 when the API could not be reached."""


RetryListener = Callable[[RetryNotice], None]

_listener: ContextVar[RetryListener | None] = ContextVar("fisk_retry_listener", default=None)


@contextmanager
def retries_reported_to(listener: RetryListener) -> Iterator[None]:
    """Within the block, the retries of model calls made on this task go to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def report_retry(notice: RetryNotice) -> None:
    """Called by a provider just before it waits to retry; nobody may be listening."""
    listener = _listener.get()
    if listener is not None:
        listener(notice)
