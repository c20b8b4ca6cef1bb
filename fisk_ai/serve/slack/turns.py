"""The turns a Slack channel admitted, and the order they run in.

A mention is admitted as a turn waiting for a worker (``max_waiting`` of them at most), or
folded into the waiting turn of the same person in the same thread (up to ``max_coalesced``
lines). A waiting turn is handed over only when one of the channel's ``workers`` is free and no
other turn of its thread runs, so a thread's turns run one after another.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from fisk_ai.agent.events import DeltaEvent, Event, TextDeltaEvent
from fisk_ai.errors import FiskError
from fisk_ai.serve.server import Work
from fisk_ai.serve.slack.edits import StatusEdits
from fisk_ai.serve.slack.options import SlackOptions, Thread, slack_session_id
from fisk_ai.serve.slack.questions import Pressed
from fisk_ai.serve.slack.text import Phase
from fisk_ai.util.cancelling import cancel_and_wait
from fisk_ai.util.ids import new_ksuid

__all__ = ["STARTED", "Folded", "Line", "Started", "Turn", "TurnQueue"]


@dataclass(frozen=True)
class Started:
    """The run took a worker: the status moves on from Queued."""


STARTED = Started()


@dataclass
class Line:
    """One mention of the bot, as its turn's prompt quotes it."""

    user: str
    text: str
    ts: str


@dataclass(eq=False)
class Turn:
    """A turn admitted for a thread: waiting, running, or ended."""

    id: str
    thread: Thread
    session_id: str
    starter: str
    lines: list[Line] = field(default_factory=list)
    pressed: Pressed | None = None
    """Set on a turn that carries a late answer to a question rather than mentions."""
    status_ts: str = ""
    phase: Phase | None = None
    work: Work | None = None
    problems: list[str] = field(default_factory=list)
    events: asyncio.Queue[Event | TextDeltaEvent | Started | None] = field(
        default_factory=asyncio.Queue
    )
    pump: asyncio.Task[None] | None = None
    edits: StatusEdits = field(init=False)
    """Set as the turn is admitted, since its edits show the turn."""
    writing: list[str] = field(default_factory=list)
    """The pieces of the text the model is writing in its latest call."""
    call_ended: bool = False
    """The latest model call returned: the next piece begins the text of another call."""
    handed_seq: int | None = None
    """Where the thread's journal ended when the turn was handed over, for a follow-up."""

    def emit(self, event: Event | Started) -> None:
        self.events.put_nowait(event)

    def emit_delta(self, event: DeltaEvent) -> None:
        # A thread is shown the answer being written, never the thinking behind it.
        if isinstance(event, TextDeltaEvent):
            self.events.put_nowait(event)


@dataclass(frozen=True)
class Folded:
    """A mention folded into ``turn``, the waiting turn of the same person in its thread."""

    turn: Turn


class TurnQueue:
    """The waiting and running turns of a channel with ``options``. ``edits_for`` makes an
    admitted turn's status edits; ``in_background`` runs what the caller must not wait on."""

    def __init__(
        self,
        options: SlackOptions,
        edits_for: Callable[[Turn], StatusEdits],
        in_background: Callable[[Awaitable[None]], None],
    ) -> None:
        self._options = options
        self._edits_for = edits_for
        self._in_background = in_background
        self._capacity = asyncio.Semaphore(options.workers)
        self._changed = asyncio.Condition()
        self._waiting: list[Turn] = []
        self._running: dict[Thread, Turn] = {}
        self._closed = False
        self._draining = False
        self._fault: FiskError | None = None

    @property
    def closed(self) -> bool:
        """No more turns are admitted."""
        return self._closed

    @property
    def draining(self) -> bool:
        """The channel closed while turns ran: they stop at their next step."""
        return self._draining

    async def add_mention(self, thread: Thread, line: Line) -> Turn | Folded | None:
        """The turn ``line`` begins, or where it folded; None when ``max_waiting`` turns wait
        already and this one would wait too."""
        async with self._changed:
            folding = next(
                (
                    t
                    for t in self._waiting
                    if t.thread == thread
                    and t.starter == line.user
                    and t.pressed is None
                    and len(t.lines) < self._options.max_coalesced
                ),
                None,
            )
            if folding is not None:
                folding.lines.append(line)
                return Folded(folding)
            if self._would_wait(thread) and len(self._waiting) >= self._options.max_waiting:
                return None
            turn = self._admit(thread, line.user)
            turn.lines.append(line)
            return turn

    async def add_answer(self, thread: Thread, user: str, pressed: Pressed) -> Turn:
        """A turn resuming the conversation from a late answer, behind whatever the thread
        runs; it is admitted however many turns wait, since the conversation waits on it."""
        async with self._changed:
            turn = self._admit(thread, user)
            turn.pressed = pressed
        return turn

    def _would_wait(self, thread: Thread) -> bool:
        return self._capacity.locked() or thread in self._running or bool(self._waiting)

    def _admit(self, thread: Thread, user: str) -> Turn:
        """A new waiting turn; called holding ``_changed``."""
        turn = Turn(
            id=new_ksuid(),
            thread=thread,
            session_id=slack_session_id(self._options.identity, thread),
            starter=user,
        )
        turn.phase = Phase.QUEUED if self._would_wait(thread) else Phase.THINKING
        turn.edits = self._edits_for(turn)
        self._waiting.append(turn)
        self._changed.notify_all()
        return turn

    async def take(self) -> Turn | None:
        """The next turn to run, once a worker is free and no other turn of its thread runs;
        None once the queue is closed. A faulted channel raises its fault."""
        if not await self._slot():
            return None
        async with self._changed:
            while True:
                if self._fault is not None:
                    self._capacity.release()
                    raise self._fault
                if self._closed:
                    self._capacity.release()
                    return None
                turn = next((t for t in self._waiting if t.thread not in self._running), None)
                if turn is not None:
                    break
                await self._changed.wait()
            self._waiting.remove(turn)
            self._running[turn.thread] = turn
        return turn

    async def _slot(self) -> bool:
        acquiring = asyncio.ensure_future(self._capacity.acquire())
        closing = asyncio.ensure_future(self._until_closed())
        await asyncio.wait({acquiring, closing}, return_when=asyncio.FIRST_COMPLETED)
        closing.cancel()
        if not acquiring.done():
            await cancel_and_wait(acquiring)
            if self._fault is not None:
                raise self._fault
            return False
        return True

    async def _until_closed(self) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self._closed or self._fault is not None)

    async def finished(self, turn: Turn, *, return_folded: bool = False) -> list[Turn]:
        """``turn`` ran, or could not be handed over: its thread and its worker are free. With
        ``return_folded`` the mentions waiting behind it in its thread are withdrawn and
        returned, to be given back to the thread."""
        async with self._changed:
            self._running.pop(turn.thread, None)
            folded = []
            if return_folded:
                folded = [t for t in self._waiting if t.thread == turn.thread and t.pressed is None]
                for waiting in folded:
                    self._waiting.remove(waiting)
            self._changed.notify_all()
        self._capacity.release()
        return folded

    def running_in(self, thread: Thread) -> Turn | None:
        return self._running.get(thread)

    async def withdraw(self, turn_id: str) -> Turn | None:
        """The waiting turn ``turn_id``, which will not run now; None when none waits."""
        async with self._changed:
            waiting = next((t for t in self._waiting if t.id == turn_id), None)
            if waiting is not None:
                self._waiting.remove(waiting)
        return waiting

    async def close(self) -> list[Turn]:
        """Admit no more turns, and ask the running ones to stop at their next step; the turns
        that never started, which will not run."""
        async with self._changed:
            if self._closed:
                return []
            self._closed = True
            self._draining = True
            never_started, self._waiting = self._waiting, []
            for turn in self._running.values():
                if turn.work is not None:
                    turn.work.suspend.set()
            self._changed.notify_all()
        return never_started

    def refuse_more(self) -> None:
        """Admit no more turns, with no notice to those waiting: the channel is shutting down."""
        self._closed = True

    def fault(self, error: FiskError) -> None:
        """The channel cannot go on: ``take`` raises ``error`` from now on."""
        if self._fault is None:
            self._fault = error
            self._in_background(self._wake())

    async def _wake(self) -> None:
        async with self._changed:
            self._changed.notify_all()
