"""HOST. The Server: it owns the runs; its channels own getting work in and answers out.

A channel is a name, ``next`` and ``close``, and nothing about a transport. What a channel can
do is what it fills in on the Work it hands over: one that can put a question to a person gives
a prompter, one that cannot leaves it None and the Server asks nobody. Likewise a channel whose
conversations take no further turn (queued jobs) marks its Work ``single_turn``, and the run
gets the shared settings narrowed to a non-interactive one, as a budget narrows its limits.

Each channel has its own pool of slots and its own puller. The puller takes work first and a slot
second, so a slot is never parked on a channel with nothing to do. Every Work taken is reported
exactly once through its ``done``, whether it ran to the end, crashed, was cancelled by a stop or
never started because the server was stopping.

``drain`` and ``stop`` are one shutdown at two moments. Both close every channel once, so no more
work is taken; a drain lets the running work finish, a stop also cancels it. A channel whose
``next`` raises has faulted: the server drains, and ``serve`` raises the error once the running
work is over, so the command exits non-zero and a supervisor can restart it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from fisk_ai.agent.events import EventSink
from fisk_ai.agent.loop import AgentError
from fisk_ai.agent.outcome import (
    Abandoned,
    Crashed,
    Failed,
    NotRun,
    Refusal,
    RunResult,
    TurnOutcome,
)
from fisk_ai.agent.pii import deferred_answer_screen
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import PromptDenied, Runner, SessionCompleted
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.sessions.answer import answer_deferred
from fisk_ai.sessions.errors import (
    DeferredAnswerRefused,
    JournalLocked,
    ResumeRefused,
    SessionError,
)
from fisk_ai.sessions.fingerprint import RESUME_ADVICE, ResumeAdvice
from fisk_ai.sessions.fold import fold
from fisk_ai.sessions.records import Record
from fisk_ai.telemetry import TurnTrace, turn_trace
from fisk_ai.tools.questions import NoOperator, Prompter
from fisk_ai.util.cancelling import cancel_and_wait

__all__ = [
    "Channel",
    "DeferredAnswer",
    "HostedChannels",
    "RequestedLimits",
    "Resources",
    "Server",
    "Work",
    "WorkKind",
    "lowered",
]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RequestedLimits:
    """Limits the sender of a piece of work asks for; zero asks for nothing. They can only lower
    the configured limits, since the sender is somebody the server does not control."""

    max_tokens: int = 0
    max_iterations: int = 0


def lowered(
    settings: AgentSettings, budget: RequestedLimits | None, *, single_turn: bool = False
) -> AgentSettings:
    """``settings`` with ``budget`` applied, and not interactive for a ``single_turn`` (see
    ``Work.single_turn``): what a piece of work asks can only narrow the configured settings.
    The tool timeout is left alone: both it and the configured limits come from whoever
    started the server."""
    if single_turn and settings.interactive:
        settings = dataclasses.replace(settings, interactive=False)
    if budget is None:
        return settings
    if budget.max_tokens > 0:
        settings = dataclasses.replace(
            settings, max_tokens=min(settings.max_tokens, budget.max_tokens)
        )
    if budget.max_iterations > 0:
        settings = dataclasses.replace(
            settings, max_iterations=min(settings.max_iterations, budget.max_iterations)
        )
    return settings


class WorkKind(enum.Enum):
    START = "start"
    """A new conversation opened with ``prompt``."""
    FOLLOW_UP = "follow_up"
    """Another turn of a stored conversation: it is resumed first, then given ``prompt``."""
    RESUME = "resume"
    """A stored conversation carried on where it stopped, with no new prompt."""


@dataclass(frozen=True)
class DeferredAnswer:
    """The result a person gave a deferred call after its run stopped. It is journaled before
    the resume when the call is still deferred, and left alone otherwise."""

    tool_use_id: str
    result: str


@dataclass(frozen=True, eq=False)
class Work:
    """One turn a channel hands the server.

    ``done`` is required and awaited exactly once with how the work ended, outside the run, so
    even a cancelled run records what happened. ``run_context`` is called once, after a slot is
    acquired and immediately before the run: the only signal the channel gets that its work
    started.
    ``prompter`` None means nobody can be asked. Setting ``suspend`` parks the run at its next
    boundary, ending it suspended.
    """

    kind: WorkKind
    session_id: str
    done: Callable[[RunResult], Awaitable[None]]
    events: EventSink
    prompt: str = ""
    force: bool = False
    budget: RequestedLimits | None = None
    prompter: Prompter | None = None
    suspend: asyncio.Event = field(default_factory=asyncio.Event)
    run_context: Callable[[], None] | None = None
    deferred_answer: DeferredAnswer | None = None
    conversation_token: str = ""
    """The token a caller continues the conversation with; kept in a new journal's meta."""
    caller: str = ""
    """Who asked, kept in a new journal's meta."""
    traceparent: str = ""
    """The caller's W3C trace context, which the run's spans continue."""
    trace: TurnTrace = field(default_factory=TurnTrace)
    """Filled in by the run: the trace it recorded, for the terminal message."""
    single_turn: bool = False
    """Nobody can send this conversation another turn (a queued job), so the run is not
    interactive whatever the server's settings say: its journal ends as the run did rather
    than open for a next turn."""
    records: Sequence[Record] = ()
    """The conversation's journal when the channel has just read it for its own checks, so
    the turn does not read it again; empty to have the server read it."""
    conversation: bool = False
    """Callers send this conversation turns over the life of a deployment (the prompts
    channel): a changed tool set or a lowered budget does not stop it, its allowance is the
    lowest it was given, and a configuration change that does stop it ends the turn failed."""
    resume_advice: ResumeAdvice = RESUME_ADVICE
    """What a refusal of the resume gate tells the sender to do, in the sender's terms."""


class Channel(Protocol):
    """Where work comes from."""

    @property
    def name(self) -> str: ...

    async def next(self) -> Work | None:
        """The next piece of work, waiting for one; None once the channel is closed and has
        nothing more to hand over."""
        ...

    async def close(self) -> None:
        """Take no more work; ``next`` then hands over what it already took and returns None."""
        ...


class _TurnNotTaken(Exception):
    """A follow-up reached a conversation that waits on a deferred call."""


@dataclass(eq=False)
class _Pool:
    channel: Channel
    slots: asyncio.Semaphore


class Server:
    """Runs the work of ``channels``, each given as (channel, slots): at most ``slots`` of a
    channel's turns run at once, each in a fresh Runner over ``resources``."""

    def __init__(self, resources: Resources, channels: Sequence[tuple[Channel, int]]) -> None:
        for channel, slots in channels:
            if slots < 1:
                raise ValueError(f"channel {channel.name} needs at least one slot")
        self._resources = resources
        self._pools = [_Pool(channel, asyncio.Semaphore(slots)) for channel, slots in channels]
        self._stopping = asyncio.Event()
        self._closing: asyncio.Future[None] | None = None
        self._cancellable: set[asyncio.Task[None]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._in_hand = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._fault: Exception | None = None
        self._fault_drain: asyncio.Future[None] | None = None

    @property
    def running(self) -> int:
        """Work taken from a channel and not yet reported done."""
        return self._in_hand

    async def serve(self) -> None:
        """Take and run work until every channel is closed and its work is done. Raises the
        error of a channel that faulted, after draining the server."""
        loop = asyncio.get_running_loop()
        pullers = [
            loop.create_task(self._pull(pool), name=f"serve {pool.channel.name}")
            for pool in self._pools
        ]
        try:
            await asyncio.gather(*pullers)
            await self.wait_idle()
        except asyncio.CancelledError:
            await asyncio.shield(self._stop_pullers(pullers))
            raise
        if self._fault is not None:
            raise self._fault

    async def drain(self) -> None:
        """Close every channel; running work carries on to its end."""
        await self._shut(cancel=False)

    async def stop(self) -> None:
        """Close every channel and cancel the running work; returns once each piece of work
        taken has been reported done."""
        await self._shut(cancel=True)

    async def wait_idle(self) -> None:
        """Return once no work taken is still waiting to be reported done."""
        while self._in_hand:
            await self._idle.wait()

    async def _shut(self, *, cancel: bool) -> None:
        if cancel:
            self._stopping.set()
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close_channels())
        # Shielded: a stop arriving part way must not cut a channel's close short.
        await asyncio.shield(self._closing)
        if cancel:
            for task in list(self._cancellable):
                task.cancel()
            await self.wait_idle()

    async def _close_channels(self) -> None:
        for pool in self._pools:
            try:
                await pool.channel.close()
            except Exception:
                _log.exception("closing channel %s failed", pool.channel.name)

    async def _stop_pullers(self, pullers: list[asyncio.Task[None]]) -> None:
        await self.stop()
        for puller in pullers:
            puller.cancel()
        await asyncio.gather(*pullers, return_exceptions=True)

    async def _pull(self, pool: _Pool) -> None:
        while True:
            try:
                work = await pool.channel.next()
            except Exception as error:
                _log.error("channel %s failed: %s", pool.channel.name, error)
                if self._fault is None:
                    self._fault = error
                self._fault_drain = asyncio.ensure_future(self.drain())
                return
            if work is None:
                return
            self._take()
            if not await self._acquire(pool.slots):
                await self._report(work, _ended(work, Abandoned()))
                continue
            task = asyncio.get_running_loop().create_task(
                self._execute(work, pool.slots), name=f"serve {pool.channel.name} work"
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _acquire(self, slots: asyncio.Semaphore) -> bool:
        """Wait for a slot; False when the server stopped first."""
        if self._stopping.is_set():
            return False
        loop = asyncio.get_running_loop()
        acquiring = loop.create_task(slots.acquire())
        stopping = loop.create_task(self._stopping.wait())
        await asyncio.wait({acquiring, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not acquiring.done():
            await cancel_and_wait(acquiring)
        acquired = acquiring.done() and not acquiring.cancelled()
        if acquired and self._stopping.is_set():
            slots.release()
            return False
        return acquired

    async def _execute(self, work: Work, slots: asyncio.Semaphore) -> None:
        try:
            if self._stopping.is_set():
                outcome = _ended(work, Abandoned())
            else:
                outcome = await self._run(work)
        finally:
            slots.release()
        await self._report(work, outcome)

    @contextlib.contextmanager
    def _stoppable(self) -> Iterator[None]:
        """While the turn runs, a stop cancels it. Only then: a cancel landing once the turn has
        ended would cut its journal's close short and skip the report, and the server would
        wait for that work forever."""
        task = asyncio.current_task()
        assert task is not None
        self._cancellable.add(task)
        try:
            yield
        finally:
            self._cancellable.discard(task)

    async def _run(self, work: Work) -> RunResult:
        resources = self._resources
        runner = Runner(
            dataclasses.replace(
                resources,
                settings=lowered(resources.settings, work.budget, single_turn=work.single_turn),
            ),
            events=work.events,
            prompter=work.prompter if work.prompter is not None else NoOperator(),
            suspend=work.suspend,
            traceparent=work.traceparent,
            conversation=work.conversation,
            resume_advice=work.resume_advice,
        )
        try:
            if work.run_context is not None:
                work.run_context()
            with turn_trace(work.trace), self._stoppable():
                return await self._turn(runner, work)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            return _ended(work, Abandoned())
        except _TurnNotTaken:
            return _ended(
                work,
                NotRun(
                    Refusal.TURN_NOT_TAKEN,
                    "the conversation is waiting on a deferred tool result; answer it before "
                    "sending another turn",
                ),
            )
        except DeferredAnswerRefused as error:
            return _ended(work, NotRun(Refusal.ALREADY_ANSWERED, str(error)))
        except JournalLocked:
            return _ended(
                work,
                NotRun(
                    Refusal.CONVERSATION_BUSY,
                    "another worker is running a turn of this conversation; wait for its "
                    "terminal message",
                ),
            )
        except PromptDenied as error:
            return _ended(work, NotRun(Refusal.REJECTED, str(error)))
        except (ResumeRefused, SessionCompleted, SessionError) as error:
            # The resume gate, or the journal read before the turn ran, refused: the
            # conversation is as it was. A store failing mid-turn reaches the runner's barrier
            # and arrives as the AgentError below.
            return _ended(work, _not_opened(work, error))
        except AgentError as error:
            return _ended(work, Crashed(str(error)))
        except Exception:
            _log.exception("the turn of session %s crashed", work.session_id)
            return _ended(work, Crashed())
        finally:
            with contextlib.suppress(Exception):
                await runner.close()

    async def _turn(self, runner: Runner, work: Work) -> RunResult:
        store = self._resources.store
        match work.kind:
            case WorkKind.START:
                return await runner.start(
                    work.prompt,
                    session_id=work.session_id,
                    conversation_token=work.conversation_token,
                    caller=work.caller,
                )
            case WorkKind.RESUME:
                if work.deferred_answer is not None:
                    await self._answer_deferred(work, work.deferred_answer)
                return await runner.resume(work.session_id, force=work.force)
            case WorkKind.FOLLOW_UP:
                records = work.records or await store.read(work.session_id)
                if fold(records).deferred:
                    raise _TurnNotTaken
                # The prompt goes in as written after whatever the last turn left: a failed
                # request is not sent again first, and a stopped turn is not finished first.
                return await runner.follow_up_stored(
                    work.session_id, work.prompt, force=work.force, records=records
                )

    async def _answer_deferred(self, work: Work, answer: DeferredAnswer) -> None:
        store = self._resources.store
        conversation = fold(await store.read(work.session_id))
        if any(call.tool_use_id == answer.tool_use_id for call in conversation.deferred):
            # Scanned as the tool's output would have been, under the mode of the run it resumes:
            # the resume journals no tool_result of its own, so its PostToolUse guard never sees it.
            screen = deferred_answer_screen(self._resources.settings.pii_mode, work.events)
            await answer_deferred(
                store, work.session_id, answer.tool_use_id, answer.result, screen=screen
            )

    def _take(self) -> None:
        self._in_hand += 1
        self._idle.clear()

    async def _report(self, work: Work, outcome: RunResult) -> None:
        try:
            await work.done(outcome)
        except Exception:
            _log.exception("reporting the outcome of session %s failed", work.session_id)
        finally:
            self._in_hand -= 1
            if not self._in_hand:
                self._idle.set()


def _not_opened(work: Work, error: Exception) -> TurnOutcome:
    """How a turn ends whose conversation could not be opened as asked."""
    if work.conversation and isinstance(error, ResumeRefused):
        # The configuration the conversation was started under is gone, so it takes no more
        # turns: the turn failed, and the sentence says to start a new conversation.
        return Failed(str(error))
    return NotRun(Refusal.NOT_STARTED, str(error))


def _ended(work: Work, outcome: TurnOutcome) -> RunResult:
    """How a piece of work ended that has no run's totals to report."""
    return RunResult(outcome, work.session_id)


class HostedChannels:
    """One Server over every channel of a `fisk serve` process, as the process drains and
    closes it: a drain closes every channel and waits for the runs under way, a close also
    abandons them (each channel answers its own), and ``serving`` ends with a channel's fault
    once the Server has drained the rest."""

    def __init__(
        self, identity: str, resources: Resources, channels: Sequence[tuple[Channel, int]]
    ) -> None:
        self._identity = identity
        self._server = Server(resources, channels)
        self._serving: asyncio.Task[None] | None = None

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def serving(self) -> asyncio.Task[None] | None:
        return self._serving

    @property
    def running(self) -> int:
        return self._server.running

    def start(self) -> None:
        self._serving = asyncio.get_running_loop().create_task(
            self._server.serve(), name=f"serve {self._identity}"
        )

    async def drain(self) -> None:
        await self._server.drain()

    async def wait_idle(self) -> None:
        await self._server.wait_idle()

    async def close(self) -> None:
        await self._server.stop()
        if self._serving is not None:
            await asyncio.gather(self._serving, return_exceptions=True)
