"""One accepted turn: its reply set, its stop gate, the questions it has out, and its end.

While the run goes, its events queue (the run's sink must not block) for a task that publishes
them in order, and a quiet reply set gets a keepalive status now and then, so the caller can tell
a long model call from a lost worker. None goes out while a question is out, since the caller is
holding that one open itself. However the turn ended (it ran, crashed, or was given up), the
events it emitted go out first and its terminal message last.

A caller that asked for ``deltas`` also gets the pieces of each answer as the model writes them,
coalesced so a run sends at most one piece message per kind every ``DELTA_INTERVAL`` however
fast the tokens come: the first piece goes at once, later ones wait for the interval and go as
one, and any piece still waiting goes before the next whole event, so the order is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from datetime import timedelta
from functools import partial

from fisk_ai.a2a.events import delta_message, event_message
from fisk_ai.a2a.messages import (
    EventStatus,
    RequestAnswer,
    RequestPrompt,
    RequestResume,
    StatusBody,
    TerminalError,
)
from fisk_ai.a2a.outcome import terminal_message
from fisk_ai.a2a.transport import Subscription
from fisk_ai.a2a.vocabulary import ErrorCode, StopReason
from fisk_ai.agent.events import (
    DeltaEvent,
    Event,
    StatusPhase,
    TextDeltaEvent,
    ThinkingDeltaEvent,
)
from fisk_ai.agent.outcome import RunResult
from fisk_ai.serve.replies import ReplySet
from fisk_ai.tools.questions import Answer, Question
from fisk_ai.util.cancelling import cancel_and_wait

__all__ = ["DELTA_INTERVAL", "PendingQuestion", "Turn", "Turnable", "refuse", "unsubscribe"]

DELTA_INTERVAL = 0.05
"""Seconds between two piece messages of one run: at most about 20 a second."""

_Queued = Event | DeltaEvent | None

Turnable = RequestPrompt | RequestResume | RequestAnswer
"""The requests that run a turn; a request.read runs none."""


@dataclasses.dataclass(eq=False)
class PendingQuestion:
    """A question put to the caller: its answer when it comes, and each elicit.waiting."""

    kind: Question
    answered: asyncio.Future[Answer]
    waiting: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    waits: int = 0
    """elicit.waiting messages the caller sent for this question."""


class _QueuedEvents:
    """The run's event sink: emit must not block, so events queue for the publishing task."""

    def __init__(self, queue: asyncio.Queue[_Queued]) -> None:
        self._queue = queue

    def emit(self, event: Event) -> None:
        self._queue.put_nowait(event)

    def close(self) -> None:
        """The run is over: nothing more is emitted."""


class _QueuedEventsAndDeltas(_QueuedEvents):
    """The sink of a run whose caller asked for deltas: pieces are held and joined so that at
    most one message per ``interval`` carries them."""

    def __init__(self, queue: asyncio.Queue[_Queued], interval: float) -> None:
        super().__init__(queue)
        self._interval = interval
        self._held: list[DeltaEvent] = []
        self._next_send = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def emit(self, event: Event) -> None:
        self._release()
        super().emit(event)

    def emit_delta(self, event: DeltaEvent) -> None:
        self._hold(event)
        loop = asyncio.get_running_loop()
        if loop.time() >= self._next_send:
            self._release()
        elif self._timer is None:
            self._timer = loop.call_at(self._next_send, self._release)

    def close(self) -> None:
        self._release()

    def _hold(self, event: DeltaEvent) -> None:
        last = self._held[-1] if self._held else None
        if isinstance(event, TextDeltaEvent) and isinstance(last, TextDeltaEvent):
            self._held[-1] = TextDeltaEvent(last.text + event.text)
        elif isinstance(event, ThinkingDeltaEvent) and isinstance(last, ThinkingDeltaEvent):
            self._held[-1] = ThinkingDeltaEvent(last.text + event.text)
        else:
            self._held.append(event)

    def _release(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._held:
            return
        for held in self._held:
            self._queue.put_nowait(held)
        self._held.clear()
        self._next_send = asyncio.get_running_loop().time() + self._interval


class Turn:
    """One accepted request running a turn of conversation ``session_id``."""

    def __init__(self, request: Turnable, replies: ReplySet, session_id: str) -> None:
        self.request = request
        self.replies = replies
        self.session_id = session_id
        self.suspend = asyncio.Event()
        """Set by a cancel: the run parks at its next boundary and a question out is given up."""
        self.questions: dict[str, PendingQuestion] = {}
        self.held = 0
        """Questions out: no keepalive goes while the caller holds one open."""
        self.subscriptions: list[Subscription] = []
        self._events: asyncio.Queue[_Queued] = asyncio.Queue()
        wants_deltas = request.stream and request.deltas
        self.sink = (
            _QueuedEventsAndDeltas(self._events, DELTA_INTERVAL)
            if wants_deltas
            else _QueuedEvents(self._events)
        )
        self._pump: asyncio.Task[None] | None = None
        self._keepalive: asyncio.Task[None] | None = None
        self.trace = replies.trace
        """What the run recorded of its trace: the terminal message reports it, and every reply
        sent outside a span carries its root's traceparent."""

    def begin(self, keepalive_interval: timedelta) -> None:
        """The run is starting: its events go out, and quiet spells get keepalives."""
        loop = asyncio.get_running_loop()
        self._pump = loop.create_task(self._publish_events(), name="a2a prompt events")
        self._keepalive = loop.create_task(
            self._keep_alive(keepalive_interval.total_seconds()), name="a2a prompt keepalive"
        )

    async def flush(self) -> None:
        """Return once every event emitted so far has been published (or dropped)."""
        await self._events.join()

    async def stop_publishing(self) -> None:
        """The run is over: the events it emitted go out, keepalives stop, and the turn's
        cancel and elicit subjects close."""
        self.sink.close()
        self._events.put_nowait(None)
        if self._pump is not None:
            await self._pump
        if self._keepalive is not None:
            await cancel_and_wait(self._keepalive)
        await unsubscribe(self.subscriptions)

    async def send_terminal(self, result: RunResult) -> None:
        """End the reply set with the message saying how the turn ended."""
        trace = self.trace
        await self.replies.send(
            lambda header: terminal_message(
                result,
                header,
                identity=header["sender"].name,
                trace_id=trace.trace_id,
                content_exported=trace.content_exported,
            )
        )

    async def _publish_events(self) -> None:
        events = self._events
        while True:
            event = await events.get()
            try:
                if event is None:
                    return
                if isinstance(event, TextDeltaEvent | ThinkingDeltaEvent):
                    await self.replies.send(partial(delta_message, event))
                elif self.request.stream:
                    await self.replies.send(partial(event_message, event))
            finally:
                events.task_done()

    async def _keep_alive(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            idle = asyncio.get_running_loop().time() - self.replies.last_sent
            if self.held == 0 and idle >= interval:
                await self.replies.send(
                    lambda header: EventStatus(
                        **header, block=StatusBody(phase=StatusPhase.WORKING)
                    )
                )


async def unsubscribe(subscriptions: list[Subscription]) -> None:
    """Close every subscription, whatever became of its connection, and let go of them: the
    handlers hold the turn."""
    closing = list(subscriptions)
    subscriptions.clear()
    for subscription in closing:
        with contextlib.suppress(Exception):
            await subscription.unsubscribe()


async def refuse(replies: ReplySet, code: ErrorCode, text: str) -> None:
    """Turn a request down: a refusing ack, then a terminal error carrying ``code``, with the
    stop reason every error carries (nothing ran, so the plain one)."""
    await replies.refuse(
        text,
        lambda header: TerminalError(**header, error=text, code=code, stop_reason=StopReason.ERROR),
    )
