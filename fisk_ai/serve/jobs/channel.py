"""The queued-jobs channel: tasks claimed off the queue's ``WORKERS`` consumer, each run as Work
on the Server and answered on its task record, as an asyncjobs Go worker would.

A task is claimed only when a slot is free, so no message waits unacknowledged on a busy
worker. While the run works, the message's lease is renewed (``+WPI``). The journal of a job is
``j-`` + sha256hex(identity + NUL + task id): a redelivery reaches the same journal and resumes
it, and a journal that already completed is answered from its last answer with no model call.

How each ending lands on the task:

- a run that ended (answered or failed): ``complete`` with the v1 result or error message in
  ``result.payload``, then ``+ACK``; a failed run (a model refusal among them, stored as an
  error) is not retried;
- a payload or a count the worker cannot run: ``terminated`` with the reason in ``last_err``,
  ``+TERM``;
- an item naming no task, or a task document nobody can read: ``+TERM`` with a warning, the
  document left as it was (there is nothing readable to record on);
- a journal another worker holds, a worker stopped part way, or a drain that stopped the run
  at its next resumable point: ``retry`` with ``last_err``, ``-NAK``, so the queue redelivers it
  and the redelivery resumes the journal;
- a task of another type: the record is left untouched and the item is NAKed with a delay, so
  a worker for that type can claim it (no error logged, as the user guide says).

Every item, document and payload is read with the bounded loader, and whatever one item
raises costs that item (NAKed with a delay, logged), never the channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import A2AError
from fisk_ai.a2a.messages import (
    Identity,
    RequestPrompt,
    TerminalError,
    TerminalResult,
    reply_header,
)
from fisk_ai.a2a.outcome import terminal_message
from fisk_ai.a2a.vocabulary import Direction, StopReason
from fisk_ai.agent.outcome import (
    Abandoned,
    Completed,
    Crashed,
    Failed,
    NotRun,
    Refusal,
    RunResult,
    Suspended,
)
from fisk_ai.errors import BoundedInputError
from fisk_ai.serve.jobs.wire import (
    FINISHED_STATES,
    TRACEPARENT_HEADER,
    QueueSettings,
    StoredTask,
    TaskRefused,
    TaskUnreadable,
    count_of,
    decode_payload,
    load_task,
    parse_time,
    publish_event,
    queue_stream,
    save_task,
    timestamp,
)
from fisk_ai.serve.oplog import ending_fields, operator_log
from fisk_ai.serve.server import RequestedLimits, Work, WorkKind
from fisk_ai.sessions.errors import SessionError
from fisk_ai.sessions.fingerprint import ResumeAdvice
from fisk_ai.sessions.fold import fold
from fisk_ai.sessions.records import TerminalReason
from fisk_ai.telemetry import TurnTrace
from fisk_ai.util.bounded import loads_json
from fisk_ai.util.cancelling import cancel_and_wait
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient
    from nats.aio.msg import Msg
    from nats.js.client import JetStreamContext

    from fisk_ai.agent.events import Event
    from fisk_ai.agent.resources import Resources

__all__ = ["JobsChannel", "JobsOptions", "job_session_id"]

_log = logging.getLogger(__name__)

OTHER_TYPE_DELAY = 60.0
"""Seconds before a task of another type is offered again."""
RETRY_DELAY = 5.0
"""Seconds before a job returned to the queue (journal busy, worker stopping) is offered again."""
FETCH_WAIT = 0.5
"""Seconds one pull waits for an item; a close is noticed within it."""
MAX_ITEM_BYTES = 4096
"""Bytes a work item may hold: it names a task and nothing else."""
JOB_RESUME_ADVICE = ResumeAdvice(
    changed="restore the configuration the job started under, or enqueue it again as a new job "
    "(a job whose request sets force: true carries on across such a change)",
    never="; restore llm.provider, or enqueue it again as a new job",
)
"""What a redelivered job's refusal by the resume gate tells its operator: the job's request
is fixed once queued, so the wire's force goes on a new job, never a command line's --force;
and no force lifts a changed provider."""
# Characters a task id cannot hold, since it becomes a token of the task's subject.
_NOT_IN_TASK_ID = frozenset(" \t\r\n.*>")


def job_session_id(identity: str, task_id: str) -> str:
    """The journal a job runs under: its own name space, so a task id spelling another
    channel's journal id still reaches a journal of its own."""
    digest = hashlib.sha256(f"{identity}\x00{task_id}".encode()).hexdigest()
    return f"j-{digest}"


@dataclass(frozen=True)
class JobsOptions:
    identity: str
    queue: str = "FISK_AI"
    task_type: str = "fisk-ai:run"
    workers: int = 1
    max_payload: int = 524288


class _Silent:
    """Nobody watches a queued job's events."""

    def emit(self, event: Event) -> None:
        del event


class JobsChannel:
    """Takes ``options.task_type`` tasks off ``options.queue`` on ``client``, at most
    ``options.workers`` at a time, for a Server whose runs use ``resources``."""

    def __init__(
        self,
        client: NatsClient,
        resources: Resources,
        options: JobsOptions,
        settings: QueueSettings,
    ) -> None:
        if options.workers < 1:
            raise ValueError("workers must be at least 1")
        self._client = client
        self._js: JetStreamContext = client.jetstream()
        self._resources = resources
        self._options = options
        self._settings = settings
        self._identity = Identity(name=options.identity)
        self._capacity = asyncio.Semaphore(options.workers)
        self._closed = asyncio.Event()
        self._subscription: Any = None
        self._running: set[asyncio.Event] = set()
        """The suspend events of the jobs handed to the Server and not yet answered."""

    @property
    def name(self) -> str:
        return f"asyncjobs/{self._options.queue}"

    @property
    def options(self) -> JobsOptions:
        return self._options

    @property
    def settings(self) -> QueueSettings:
        return self._settings

    async def open(self) -> None:
        self._subscription = await self._js.pull_subscribe_bind(
            durable="WORKERS", stream=queue_stream(self._options.queue)
        )

    async def close(self) -> None:
        """Take no more jobs; the running ones stop at their next resumable point and go back
        to the queue, so a drain lasts one step of each run rather than the whole run."""
        self._closed.set()
        for suspend in self._running:
            suspend.set()

    async def shutdown(self) -> None:
        """Let go of the consumer once the Server is done with the channel."""
        self._closed.set()
        if self._subscription is not None:
            subscription, self._subscription = self._subscription, None
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    async def next(self) -> Work | None:
        import nats.errors

        while not self._closed.is_set():
            if not await self._slot():
                return None
            try:
                work = await self._take()
            except (nats.errors.Error, SessionError, OSError) as error:
                # A node of the cluster going away fails one pull or one claim, not the
                # channel: the item comes back when its lease runs out, and the client
                # reconnects to another node meanwhile.
                _log.warning("taking a job off %s failed, trying again: %s", self.name, error)
                self._capacity.release()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closed.wait(), FETCH_WAIT)
                continue
            if work is not None:
                return work
            self._capacity.release()
        return None

    async def _slot(self) -> bool:
        """Wait for a free slot; False once the channel closes first."""
        acquiring = asyncio.ensure_future(self._capacity.acquire())
        closing = asyncio.ensure_future(self._closed.wait())
        await asyncio.wait({acquiring, closing}, return_when=asyncio.FIRST_COMPLETED)
        closing.cancel()
        if not acquiring.done():
            await cancel_and_wait(acquiring)
            return False
        if self._closed.is_set():
            self._capacity.release()
            return False
        return True

    async def _take(self) -> Work | None:
        """One item off the queue, claimed; None when there was none or it needs no run."""
        assert self._subscription is not None, "open the channel first"
        try:
            messages = await self._subscription.fetch(1, timeout=FETCH_WAIT)
        except TimeoutError:
            return None
        message: Msg = messages[0]
        if self._closed.is_set():
            await message.nak()
            return None
        import nats.errors

        try:
            return await self._claim(message)
        except (nats.errors.Error, SessionError, OSError):
            raise
        except Exception:
            # Whatever one item does, it costs that item, not the worker: the item is offered
            # again later and the log keeps the stack for whoever looks into it.
            _log.exception(
                "handling a job off %s failed; its item is offered again in %g s",
                self.name,
                OTHER_TYPE_DELAY,
            )
            with contextlib.suppress(Exception):
                await message.nak(delay=OTHER_TYPE_DELAY)
            return None

    async def _claim(self, message: Msg) -> Work | None:
        task_id = _task_named(message.data)
        if task_id is None:
            # As asyncjobs does: a corrupt item names no task to record it on.
            _log.warning(
                "terminated a corrupt work item on %s (%s): it names no task",
                self.name,
                single_line(message.subject, 200),
            )
            await message.term()
            return None
        try:
            task = await load_task(self._js, task_id)
        except TaskUnreadable as unreadable:
            # Redelivering it would meet the same document, and writing a state onto a document
            # nobody can read would replace what the producer wrote.
            _log.warning(
                "terminated the work item of task %s: %s", single_line(task_id), unreadable
            )
            await message.term()
            return None
        if task is None:
            await message.term()
            return None
        if task.document.get("type") != self._options.task_type:
            await message.nak(delay=OTHER_TYPE_DELAY)
            return None
        try:
            if not await self._runnable(task, message):
                return None
            request = self._request(task)
        except TaskRefused as refused:
            await self._finish(task, "terminated", last_err=str(refused))
            await message.term()
            return None
        task.document["tries"] = count_of(task.document, "tries") + 1
        task.document["state"] = "active"
        task.document["tried"] = timestamp()
        task.document.pop("last_err", None)
        try:
            await save_task(self._js, task)
        except Exception:
            # Another worker saved it first; its delivery is the one that runs.
            _log.info("task %s was claimed by another worker", task.task_id)
            return None
        await publish_event(self._client, task)
        operator_log(
            "Accepted a job",
            channel=self.name,
            task=task.task_id,
            caller=request.sender.name,
            session=job_session_id(self._options.identity, task.task_id),
            prompt_bytes=len(request.prompt.encode()),
            tries=task.document["tries"],
        )
        # The submitter's trace rides on the work item's headers; a payload written with one in
        # its header is the fallback.
        headers = message.headers or {}
        traceparent = headers.get(TRACEPARENT_HEADER) or request.traceparent or ""
        return await self._work(task, request, message, traceparent)

    async def _stored_answer(self, session_id: str) -> RunResult | None:
        """The answer of job journal ``session_id`` when it completed; None while it has not."""
        conversation = fold(await self._resources.store.read(session_id))
        terminal = conversation.terminal
        if terminal is None or terminal.reason is not TerminalReason.COMPLETED:
            return None
        answer = conversation.messages[-1].text if conversation.messages else ""
        # The totals are the journal's, as the first answer's were.
        return RunResult(
            Completed(answer),
            session_id,
            usage=conversation.usage,
            llm_calls=conversation.llm_calls,
            tool_calls=conversation.tool_calls,
            remote_tool_calls=conversation.remote_tool_calls,
        )

    async def _runnable(self, task: StoredTask, message: Msg) -> bool:
        """Whether the task is to run now; TaskRefused when a count it holds is not one."""
        max_tries = count_of(task.document, "max_tries")
        tries = count_of(task.document, "tries")
        state = task.state
        if state in FINISHED_STATES:
            await message.ack()
            return False
        now = datetime.now(UTC)
        tried = parse_time(str(task.document.get("tried", "")))
        if state == "active" and tried is not None and now - tried < self._settings.run_time:
            # Still running elsewhere: left unacknowledged, the queue offers it again later.
            return False
        deadline = parse_time(str(task.document.get("deadline", "")))
        if (deadline is not None and now > deadline) or (max_tries > 0 and tries >= max_tries):
            await self._finish(task, "expired")
            await message.ack()
            return False
        return True

    def _request(self, task: StoredTask) -> RequestPrompt:
        data = decode_payload(task.document, self._options.max_payload)
        try:
            request = decode(data, direction=Direction.TO_AGENT, max_size=len(data) + 1)
        except A2AError as error:
            raise TaskRefused(f"the payload is not a valid v1 request: {error}") from None
        if not isinstance(request, RequestPrompt):
            raise TaskRefused(
                f"a queued job takes an io.choria.fisk-ai.v1.request.prompt, not {request.protocol}"
            )
        if not request.prompt.strip():
            raise TaskRefused("the request's prompt is empty")
        return request

    async def _work(
        self, task: StoredTask, request: RequestPrompt, message: Msg, traceparent: str
    ) -> Work | None:
        session_id = job_session_id(self._options.identity, task.task_id)
        store = self._resources.store
        kind = WorkKind.START
        if await store.exists(session_id):
            ended = await self._stored_answer(session_id)
            if ended is not None:
                await self._answer(task, request, message, ended, TurnTrace(), kind)
                return None
            kind = WorkKind.RESUME
        lease: list[asyncio.Task[None]] = []
        trace = TurnTrace()

        def started() -> None:
            lease.append(asyncio.get_running_loop().create_task(self._renew(message)))
            operator_log(
                "Running",
                channel=self.name,
                work=session_id,
                caller=request.sender.name,
                caller_verified=False,
                resume=session_id if kind is WorkKind.RESUME else None,
            )

        suspend = asyncio.Event()

        async def done(result: RunResult) -> None:
            self._running.discard(suspend)
            for renewing in lease:
                renewing.cancel()
            try:
                if kind is WorkKind.RESUME and isinstance(result.outcome, NotRun):
                    # Another worker holding the same delivery may have finished the journal
                    # between the look above and this resume: its answer is the job's.
                    result = await self._stored_answer(session_id) or result
                await self._answer(task, request, message, result, trace, kind)
            finally:
                self._capacity.release()

        self._running.add(suspend)
        if self._closed.is_set():
            suspend.set()
        budget = request.budget
        return Work(
            kind=kind,
            session_id=session_id,
            done=done,
            events=_Silent(),
            prompt=f"{request.prompt}\n\n{request.context}" if request.context else request.prompt,
            force=request.force,
            resume_advice=JOB_RESUME_ADVICE,
            budget=RequestedLimits(budget.max_tokens or 0, budget.max_iterations or 0)
            if budget
            else None,
            run_context=started,
            caller=request.sender.name,
            traceparent=traceparent,
            trace=trace,
            single_turn=True,
            suspend=suspend,
        )

    async def _renew(self, message: Msg) -> None:
        """Keep the lease while the run works: ``+WPI`` at a third of the run time."""
        interval = max(self._settings.run_time / 3, timedelta(milliseconds=200)).total_seconds()
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(Exception):
                await message.in_progress()

    async def _answer(
        self,
        task: StoredTask,
        request: RequestPrompt,
        message: Msg,
        result: RunResult,
        trace: TurnTrace,
        kind: WorkKind,
    ) -> None:
        reason = await self._unfinished(result, kind)
        if reason:
            await self._finish(task, "retry", last_err=reason)
            operator_log(
                "Returned a job to the queue",
                channel=self.name,
                task=task.task_id,
                caller=request.sender.name,
                session=result.session_id,
                reason=reason,
            )
            with contextlib.suppress(Exception):
                await message.nak(delay=RETRY_DELAY)
            return
        if kind is WorkKind.RESUME:
            result = _failed_when_not_resumed(result)
        header = reply_header(request, sender=self._identity)
        terminal = terminal_message(
            result,
            header,
            identity=self._options.identity,
            trace_id=trace.trace_id,
            content_exported=trace.content_exported,
        )
        terminal = _failed_when_refused(terminal)
        if trace.traceparent:
            terminal = terminal.model_copy(update={"traceparent": trace.traceparent})
        payload = json.loads(encode(terminal, max_size=1 << 24))
        now = timestamp()
        if not await self._finish(task, "complete", result={"payload": payload, "completed": now}):
            # Unlike asyncjobs' Go worker, which acks anyway and so loses the answer: the item
            # comes back after the run time and the redelivery answers from the journal.
            return
        operator_log(
            "Ending a run",
            channel=self.name,
            task=task.task_id,
            caller=request.sender.name,
            session=result.session_id,
            **ending_fields(terminal),
        )
        try:
            await message.ack_sync()
        except Exception as error:
            _log.warning("acknowledging job %s failed: %s", task.task_id, error)

    async def _unfinished(self, result: RunResult, kind: WorkKind) -> str:
        """Why the job goes back to the queue rather than being answered; empty when its run
        ended. A crash the journal does not record is the journal lost (another delivery of the
        job took it over, or the store was out of reach), and a start refused before it ran is
        the journal made first by another delivery or the store out of reach: neither is the
        job's answer."""
        outcome = result.outcome
        if isinstance(outcome, Abandoned):
            return "the worker stopped before the run finished; the redelivery resumes it"
        if isinstance(outcome, Suspended) and self._closed.is_set():
            # Nothing but the channel closing suspends a job: nobody can cancel it or be asked.
            return "the worker drained part way through the run; the redelivery resumes it"
        if isinstance(outcome, NotRun) and (
            outcome.refusal is Refusal.CONVERSATION_BUSY
            or (outcome.refusal is Refusal.NOT_STARTED and kind is WorkKind.START)
        ):
            return outcome.message
        if isinstance(outcome, Crashed) and not await self._crash_journaled(result.session_id):
            return f"{outcome.message or 'the run crashed'}; the redelivery resumes it"
        return ""

    async def _crash_journaled(self, session_id: str) -> bool:
        try:
            conversation = fold(await self._resources.store.read(session_id))
        except Exception:
            return False
        terminal = conversation.terminal
        return terminal is not None and terminal.reason is TerminalReason.ERROR

    async def _finish(
        self,
        task: StoredTask,
        state: str,
        *,
        last_err: str = "",
        result: dict[str, Any] | None = None,
    ) -> bool:
        """Store the task's new state, as the record a Go client reads; a save that lost to
        another writer is tried once more on the record as it now is, unless that record is
        finished or, for a job going back to the queue, claimed by another delivery. False
        when nothing could be stored (the task store out of reach)."""
        for attempt in range(2):
            document = task.document
            document["state"] = state
            document["tried"] = timestamp()
            if last_err:
                document["last_err"] = last_err
            else:
                document.pop("last_err", None)
            if result is not None:
                document["result"] = result
            try:
                await save_task(self._js, task)
                break
            except Exception as error:
                reloaded = None
                if attempt == 0:
                    with contextlib.suppress(Exception):
                        reloaded = await load_task(self._js, task.task_id)
                if reloaded is None:
                    _log.warning("storing task %s as %s failed: %s", task.task_id, state, error)
                    return False
                if reloaded.state in FINISHED_STATES or (
                    state == "retry" and reloaded.state == "active"
                ):
                    task.document, task.seq = reloaded.document, reloaded.seq
                    return True
                reloaded.document["tries"] = document.get("tries", 0)
                task.document, task.seq = reloaded.document, reloaded.seq
        with contextlib.suppress(Exception):
            await publish_event(self._client, task)
        return True


def _failed_when_not_resumed(result: RunResult) -> RunResult:
    """A redelivered job whose journal would not resume (the configuration changed beyond the
    resume gate, or the journal cannot be read) failed: its redeliveries meet the same journal
    and would be refused the same way, so, as the user guide has it for every failed run, it is
    answered with a v1 error saying failed and what its operator can do."""
    outcome = result.outcome
    if not isinstance(outcome, NotRun) or outcome.refusal is not Refusal.NOT_STARTED:
        return result
    return dataclasses.replace(result, outcome=Failed(outcome.message))


def _failed_when_refused(
    terminal: TerminalResult | TerminalError,
) -> TerminalResult | TerminalError:
    """A job's stored answer for a model that refused: a v1 error with stop reason refusal, as
    the user guide has a job store every failed run, so a submitter branching on the protocol
    does not read a refusal as an answer. Its text stays the error's sentence."""
    if not isinstance(terminal, TerminalResult) or terminal.stop_reason != StopReason.REFUSAL:
        return terminal
    kept = terminal.model_dump(exclude={"protocol", "stop_reason", "text"})
    return TerminalError(**kept, error=terminal.text, stop_reason=StopReason.REFUSAL)


def _task_named(data: bytes) -> str | None:
    """The task id a work item names; None for an item that names none a subject can carry."""
    try:
        item = loads_json(data, what="the work item", max_bytes=MAX_ITEM_BYTES)
    except BoundedInputError:
        return None
    task_id = item.get("job") if isinstance(item, dict) else None
    if not isinstance(task_id, str) or not task_id or _NOT_IN_TASK_ID.intersection(task_id):
        return None
    return task_id
