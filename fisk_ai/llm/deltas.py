"""Handing the pieces of a model's answer to whoever waits on the call, as they arrive.

A streaming provider reads the answer in pieces; the agent loop wants to show them while the
call is still running, yet the loop, the journal and the fingerprint keep seeing only the one
complete ``Response`` the call returns. The listener travels in a context variable down the
call's own task, as retry notices do (``fisk_ai.llm.retries``), so a provider that does not
stream has nothing to do and the ``Provider`` protocol keeps its one method.

A piece is a hint, never the record: when a call is tried again after its stream broke off,
the provider reports the retry (``report_retry``) and the next attempt's pieces start the
answer afresh, so a listener drops what it was shown since the call began.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


class DeltaKind(enum.Enum):
    TEXT = "text"
    THINKING = "thinking"


@dataclass(frozen=True)
class Delta:
    """The next piece of a text or thinking block of the answer being written."""

    kind: DeltaKind
    text: str


DeltaListener = Callable[[Delta], None]

_listener: ContextVar[DeltaListener | None] = ContextVar("fisk_delta_listener", default=None)


@contextmanager
def deltas_reported_to(listener: DeltaListener) -> Iterator[None]:
    """Within the block, the pieces of model calls made on this task go to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def listening() -> bool:
    """Whether anyone on this task takes pieces, so a provider may skip making them."""
    return _listener.get() is not None


def report_delta(delta: Delta) -> None:
    """Called by a provider for each piece it reads; nobody may be listening."""
    listener = _listener.get()
    if listener is not None:
        listener(delta)
