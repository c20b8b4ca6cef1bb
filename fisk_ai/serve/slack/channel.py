"""The Slack channel: mentions in a thread become turns of the thread's conversation.

Envelopes arrive over socket mode and are acknowledged at once; one intake task then handles
them in the order they came, so the mentions of one person fold together as they were typed.

A mention is admitted as a turn waiting for a worker (``max_waiting`` of them at most), or
folded into the waiting turn of the same person in the same thread (up to ``max_coalesced``
lines). ``next`` hands a waiting turn over only when one of the channel's ``workers`` is free
and no other turn of its thread runs, so a thread's turns run one after another.

A turn's status message is edited as the run works, showing the answer as the model writes it,
never faster than one edit a second per thread (``edits``); when the run ends the answer is
posted as a message of its own and the status message becomes a link to it. A question the run
asks is a message with buttons; the run waits ``answer_grace`` for a press and then lets go of the
thread (the call defers, or the gate stops the run), and a press arriving later, on this
process or a restarted one, resumes the conversation from the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError

from fisk_ai.a2a.vocabulary import AnswerField, AnswerKind
from fisk_ai.agent.events import (
    DeltaEvent,
    Event,
    StatusEvent,
    StatusPhase,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
    WarningKind,
)
from fisk_ai.agent.outcome import (
    Abandoned,
    Completed,
    Declined,
    Deferred,
    Failed,
    NotRun,
    RunResult,
    Suspended,
    TurnOutcome,
)
from fisk_ai.errors import FiskError
from fisk_ai.llm.types import ToolUseBlock
from fisk_ai.serve.oplog import operator_log
from fisk_ai.serve.prompts.elicitation import LateAnswerPrompter, deferred_result
from fisk_ai.serve.server import DeferredAnswer, Work, WorkKind
from fisk_ai.serve.slack.edits import Pace, RateLimited, StatusEdits
from fisk_ai.serve.slack.options import SlackOptions, Thread, slack_session_id
from fisk_ai.serve.slack.questions import (
    Pressed,
    answered_blocks,
    live_answer,
    parse_press,
    question_blocks,
    question_kind,
    question_tool,
    reason_blocks,
)
from fisk_ai.serve.slack.socket import AUTH_FAILURES
from fisk_ai.serve.slack.text import (
    CARRIED_ON,
    DRAINED_BEFORE_START,
    SETUP_CHANGED,
    STOP_ACTION,
    Phase,
    answer_blocks,
    cut_answer,
    ending_line,
    linked_blocks,
    next_phase,
    status_blocks,
)
from fisk_ai.sessions.fold import Conversation, fold
from fisk_ai.tools.questions import (
    Answer,
    InputQuestion,
    Prompter,
    Question,
    QuestionInterrupted,
    QuestionUnanswered,
)
from fisk_ai.util.durations import format_duration
from fisk_ai.util.ids import new_ksuid

if TYPE_CHECKING:
    from slack_sdk.socket_mode.aiohttp import SocketModeClient
    from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
    from slack_sdk.socket_mode.request import SocketModeRequest
    from slack_sdk.web.async_client import AsyncWebClient

    from fisk_ai.agent.resources import Resources

__all__ = ["CHANNEL_SLACK", "SlackChannel"]

CHANNEL_SLACK = "slack"
"""The channel as the banner's Endpoints row and every operator line name it."""

_log = logging.getLogger(__name__)

_BUSY_REPLY = (
    ":hourglass: I'm busy with other people's questions right now. Please mention me again "
    "in a few minutes."
)
_CLOSED_REPLY = ":zzz: The bot is restarting. Mention me again in a few minutes."
_PROBLEM_LINE = {
    WarningKind.RUN_CRASHED.value: "A tool ran into a problem on the way to this answer.",
    WarningKind.MEMORY_INDEX_UNAVAILABLE.value: (
        "My memory index could not be read on the way to this answer."
    ),
}
_TIMED_OUT = "A tool ran out of time on the way to this answer."
_HISTORY_PAGE = 200
_SEEN_LIMIT = 1024
_RESUME_ADVICE = "start a new thread"
"""What the operator's log says a thread stopped by a configuration change can do; the thread
itself is told in its own words (``SETUP_CHANGED``)."""
_RATE_LIMITED = 429
_MISSING_SCOPE = "missing_scope"
_DEFAULT_RETRY_AFTER = 1.0


@dataclass(frozen=True)
class _Started:
    """The run took a worker: the status moves on from Queued."""


_STARTED = _Started()


@dataclass
class _Line:
    user: str
    text: str
    ts: str


@dataclass(eq=False)
class _Turn:
    """A turn admitted for a thread: waiting, running, or ended."""

    id: str
    thread: Thread
    session_id: str
    starter: str
    lines: list[_Line] = field(default_factory=list)
    pressed: Pressed | None = None
    """Set on a turn that carries a late answer to a question rather than mentions."""
    status_ts: str = ""
    phase: Phase | None = None
    work: Work | None = None
    problems: list[str] = field(default_factory=list)
    events: asyncio.Queue[Event | TextDeltaEvent | _Started | None] = field(
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

    def emit(self, event: Event | _Started) -> None:
        self.events.put_nowait(event)

    def emit_delta(self, event: DeltaEvent) -> None:
        # A thread is shown the answer being written, never the thinking behind it.
        if isinstance(event, TextDeltaEvent):
            self.events.put_nowait(event)


@dataclass(eq=False)
class _LiveQuestion:
    turn: _Turn
    question: Question
    text: str
    message_ts: str
    answered: asyncio.Future[Answer]


class SlackChannel:
    """Turns of Slack threads for a Server whose runs use ``resources``; ``web`` is the bot's
    Web API client and ``socket`` the socket-mode connection, opened by ``open``."""

    def __init__(
        self,
        web: AsyncWebClient,
        socket: SocketModeClient,
        resources: Resources,
        options: SlackOptions,
    ) -> None:
        if options.workers < 1:
            raise ValueError("workers must be at least 1")
        self._web = web
        self._socket = socket
        self._resources = resources
        self._options = options
        self._capacity = asyncio.Semaphore(options.workers)
        self._changed = asyncio.Condition()
        self._waiting: list[_Turn] = []
        self._running: dict[Thread, _Turn] = {}
        self._questions: dict[str, _LiveQuestion] = {}
        self._names: dict[str, tuple[str, str]] = {}
        self._seen: dict[str, None] = {}
        self._envelopes: asyncio.Queue[SocketModeRequest | None] = asyncio.Queue()
        self._intake: asyncio.Task[None] | None = None
        self._posting: set[asyncio.Task[None]] = set()
        self._paces: dict[Thread, Pace] = {}
        self._closed = False
        self._draining = False
        self._fault: FiskError | None = None

    @property
    def name(self) -> str:
        return CHANNEL_SLACK

    @property
    def options(self) -> SlackOptions:
        return self._options

    async def open(self) -> None:
        """Start taking envelopes off the socket."""
        self._socket.socket_mode_request_listeners.append(self._receive)
        self._intake = asyncio.get_running_loop().create_task(self._take_envelopes())
        # Asked for here, so a refused app token raises rather than being retried forever by
        # the client's reconnect loop.
        self._socket.wss_uri = await self._socket.issue_new_wss_url()
        # slack-sdk leaves connect and close unannotated.
        await self._socket.connect()  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        """Take no more mentions. Turns admitted but never started are told they will not run;
        running turns stop at their next step, and say so. The socket stays open (``shutdown``
        closes it) so running turns still get stop presses and answers."""
        async with self._changed:
            if self._closed:
                return
            self._closed = True
            self._draining = True
            never_started, self._waiting = self._waiting, []
            for turn in self._running.values():
                if turn.work is not None:
                    turn.work.suspend.set()
            self._changed.notify_all()
        for turn in never_started:
            await self._tell(turn, DRAINED_BEFORE_START)

    async def shutdown(self) -> None:
        """Close the socket once the Server is done with the channel."""
        self._closed = True
        if self._intake is not None:
            self._envelopes.put_nowait(None)
            with contextlib.suppress(Exception):
                await self._intake
        if self._posting:
            await asyncio.gather(*self._posting, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self._socket.close()  # type: ignore[no-untyped-call]

    async def next(self) -> Work | None:
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
        try:
            return await self._work(turn)
        except Exception as error:
            async with self._changed:
                self._running.pop(turn.thread, None)
                self._changed.notify_all()
            self._capacity.release()
            if isinstance(error, _Refused):
                raise error.error from None
            raise

    async def _slot(self) -> bool:
        acquiring = asyncio.ensure_future(self._capacity.acquire())
        closing = asyncio.ensure_future(self._until_closed())
        await asyncio.wait({acquiring, closing}, return_when=asyncio.FIRST_COMPLETED)
        closing.cancel()
        if not acquiring.done():
            acquiring.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await acquiring
            if self._fault is not None:
                raise self._fault
            return False
        return True

    async def _until_closed(self) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self._closed or self._fault is not None)

    # Intake.

    async def _receive(self, client: AsyncBaseSocketModeClient, request: SocketModeRequest) -> None:
        from slack_sdk.socket_mode.response import SocketModeResponse

        await client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
        self._envelopes.put_nowait(request)

    async def _take_envelopes(self) -> None:
        while (request := await self._envelopes.get()) is not None:
            try:
                await self._handle(request)
            except _Refused as refused:
                self._faulted(refused.error)
            except Exception:
                _log.exception("handling a Slack %s envelope failed", request.type)

    async def _handle(self, request: SocketModeRequest) -> None:
        payload: dict[str, Any] = request.payload
        if request.type == "events_api":
            event = payload.get("event") or {}
            if event.get("type") != "app_mention":
                return
            key = f"{event.get('channel')}/{event.get('ts')}"
            if key in self._seen:
                return
            self._seen[key] = None
            if len(self._seen) > _SEEN_LIMIT:
                self._seen.pop(next(iter(self._seen)))
            await self._mentioned(str(payload.get("team_id", "")), event)
        elif request.type == "interactive" and payload.get("type") == "block_actions":
            await self._pressed(payload)

    async def _mentioned(self, team: str, event: dict[str, Any]) -> None:
        channel, ts, user = str(event["channel"]), str(event["ts"]), str(event.get("user", ""))
        thread = Thread(team, channel, str(event.get("thread_ts") or ts))
        text = self._without_bot(str(event.get("text", "")))
        if self._closed:
            await self._post(thread, _CLOSED_REPLY)
            return
        live = next((q for q in self._questions.values() if q.turn.thread == thread), None)
        if live is not None:
            if isinstance(live.question, InputQuestion):
                who = await self._speaker(user)
                await self._deliver(
                    live, Pressed("", AnswerKind.INPUT, AnswerField.VALUE, text=text), who
                )
                return
            link = await self._permalink(channel, live.message_ts)
            await self._post(thread, f":point_up: Please answer the question above first: {link}")
            return
        line = _Line(user, text, ts)
        async with self._changed:
            folding = next(
                (
                    t
                    for t in self._waiting
                    if t.thread == thread
                    and t.starter == user
                    and t.pressed is None
                    and len(t.lines) < self._options.max_coalesced
                ),
                None,
            )
            if folding is not None:
                folding.lines.append(line)
                return
            if self._would_wait(thread) and len(self._waiting) >= self._options.max_waiting:
                refuse = True
            else:
                refuse = False
                turn = self._admit(thread, user)
                turn.lines.append(line)
        if refuse:
            operator_log("Refused a mention", channel=CHANNEL_SLACK, caller=user, reason="capacity")
            await self._post(thread, _BUSY_REPLY)
            return
        operator_log(
            "Accepted a prompt",
            channel=CHANNEL_SLACK,
            thread=f"{channel}/{thread.ts}",
            caller=user,
            session=turn.session_id,
            prompt_bytes=len(text.encode()),
        )
        await self._show_admitted(turn)

    def _would_wait(self, thread: Thread) -> bool:
        return self._capacity.locked() or thread in self._running or bool(self._waiting)

    def _admit(self, thread: Thread, user: str) -> _Turn:
        """A new waiting turn; called holding ``_changed``."""
        turn = _Turn(
            id=new_ksuid(),
            thread=thread,
            session_id=slack_session_id(self._options.identity, thread),
            starter=user,
        )
        turn.phase = Phase.QUEUED if self._would_wait(thread) else Phase.THINKING
        loop = asyncio.get_running_loop()
        turn.edits = StatusEdits(
            partial(self._edit_status, turn),
            self._pace(thread),
            interval=self._options.edit_interval.total_seconds(),
            clock=loop.time,
            sleep=asyncio.sleep,
        )
        self._waiting.append(turn)
        self._changed.notify_all()
        return turn

    def _pace(self, thread: Thread) -> Pace:
        """The pace of ``thread``'s status edits, shared by its turns. Paces that no longer
        hold anything back are forgotten once many threads have had one."""
        pace = self._paces.get(thread)
        if pace is None:
            if len(self._paces) >= _SEEN_LIMIT:
                now = asyncio.get_running_loop().time()
                self._paces = {t: p for t, p in self._paces.items() if p.ready_at > now}
            pace = self._paces[thread] = Pace()
        return pace

    async def _show_admitted(self, turn: _Turn) -> None:
        if self._options.no_progress:
            return
        phase = turn.phase or Phase.THINKING
        posted = await self._call(
            "chat_postMessage",
            channel=turn.thread.channel,
            thread_ts=turn.thread.ts,
            text=phase.value,
            blocks=status_blocks(phase.value, turn=turn.id, stoppable=True),
        )
        turn.status_ts = str(posted.get("ts", "")) if posted else ""
        # The run may have started while the message was being posted.
        if turn.phase is not phase or turn.writing:
            self._changed_status(turn)

    async def _pressed(self, payload: dict[str, Any]) -> None:
        container = payload.get("container") or {}
        channel = str(container.get("channel_id") or (payload.get("channel") or {}).get("id", ""))
        thread_ts = str(container.get("thread_ts") or container.get("message_ts") or "")
        team = str((payload.get("team") or {}).get("id", ""))
        user = str((payload.get("user") or {}).get("id", ""))
        message_ts = str(container.get("message_ts", ""))
        thread = Thread(team, channel, thread_ts)
        for action in payload.get("actions") or []:
            if action.get("action_id") == STOP_ACTION:
                await self._stop(str(action.get("value", "")), thread)
                continue
            pressed = parse_press(action)
            if pressed is None:
                continue
            if pressed.opens_reason:
                await self._ask_reason(channel, message_ts, pressed, payload)
                continue
            who = await self._speaker(user)
            live = self._questions.get(pressed.question_id)
            if live is not None:
                await self._deliver(live, pressed, who)
            else:
                await self._answer_late(thread, message_ts, user, who, pressed, payload)

    async def _ask_reason(
        self, channel: str, message_ts: str, pressed: Pressed, payload: dict[str, Any]
    ) -> None:
        """Open the approval's field for the reason of a decline; the question stays open."""
        live = self._questions.get(pressed.question_id)
        text = (
            live.text if live is not None else str((payload.get("message") or {}).get("text", ""))
        )
        await self._call(
            "chat_update",
            channel=channel,
            ts=message_ts,
            text=text,
            blocks=reason_blocks(text, pressed),
        )

    async def _stop(self, turn_id: str, thread: Thread) -> None:
        running = self._running.get(thread)
        if running is not None and running.id == turn_id and running.work is not None:
            running.work.suspend.set()
            for live in list(self._questions.values()):
                if live.turn is running and not live.answered.done():
                    live.answered.set_exception(QuestionInterrupted("somebody pressed Stop"))
            self._show(running, Phase.STOPPING)
            return
        async with self._changed:
            waiting = next((t for t in self._waiting if t.id == turn_id), None)
            if waiting is not None:
                self._waiting.remove(waiting)
        if waiting is not None:
            await self._tell(waiting, ":stop_button: Stopped before it started.")

    async def _deliver(self, live: _LiveQuestion, pressed: Pressed, who: str) -> None:
        # Delivery and giving up are one step on this loop: the waiting side removes the
        # question before it stops waiting, so a press is one or the other, never both.
        if live.answered.done():
            return
        live.answered.set_result(live_answer(live.question, pressed))
        await self._call(
            "chat_update",
            channel=live.turn.thread.channel,
            ts=live.message_ts,
            text=f"{live.text} (answered by {who})",
            blocks=answered_blocks(live.text, who, pressed),
        )

    async def _answer_late(
        self,
        thread: Thread,
        message_ts: str,
        user: str,
        who: str,
        pressed: Pressed,
        payload: dict[str, Any],
    ) -> None:
        """A press on a question whose run let go of it: a turn that resumes the conversation
        from the answer, behind whatever the thread is running."""
        text = str((payload.get("message") or {}).get("text", ""))
        await self._call(
            "chat_update",
            channel=thread.channel,
            ts=message_ts,
            text=f"{text} (answered by {who})",
            blocks=answered_blocks(text, who, pressed),
        )
        self._in_background(self._retire_waiting_status(thread, message_ts))
        if self._closed:
            await self._post(thread, _CLOSED_REPLY)
            return
        async with self._changed:
            turn = self._admit(thread, user)
            turn.pressed = pressed
        operator_log(
            "A question was answered",
            channel=CHANNEL_SLACK,
            caller=user,
            question=pressed.question_id,
            session=turn.session_id,
            late=True,
        )
        await self._show_admitted(turn)

    async def _retire_waiting_status(self, thread: Thread, question_ts: str) -> None:
        """The status message of the turn that asked the question, which still says it waits
        for the answer now given, says the thread carried on; the worker that posted it may
        be gone, so it is found in the thread: the bot's last message before the question."""
        reply = await self._call(
            "conversations_replies",
            channel=thread.channel,
            ts=thread.ts,
            latest=question_ts,
            limit=_HISTORY_PAGE,
        )
        earlier = [
            m
            for m in reply.get("messages", [])
            if m.get("user") == self._options.bot_user and str(m.get("ts", "")) < question_ts
        ]
        if not earlier or earlier[-1].get("text") != Phase.WAITING.value:
            return
        status_ts = str(earlier[-1].get("ts", ""))
        edits = StatusEdits(
            _nothing_to_edit,
            self._pace(thread),
            interval=self._options.edit_interval.total_seconds(),
            clock=asyncio.get_running_loop().time,
            sleep=asyncio.sleep,
        )
        await edits.last(
            partial(
                self._call,
                "chat_update",
                paced=True,
                channel=thread.channel,
                ts=status_ts,
                text=CARRIED_ON,
                blocks=status_blocks(CARRIED_ON, turn="", stoppable=False),
            )
        )

    def _in_background(self, work: Awaitable[None]) -> None:
        """Run ``work`` beside the intake, which must not wait on it; ``shutdown`` waits for
        it."""

        async def logged() -> None:
            try:
                await work
            except Exception as error:
                _log.warning("a Slack channel task failed: %s", error)

        task = asyncio.get_running_loop().create_task(logged())
        self._posting.add(task)
        task.add_done_callback(self._posting.discard)

    # Handing a turn to the Server.

    async def _work(self, turn: _Turn) -> Work:
        store = self._resources.store
        kind = WorkKind.START
        deferred_answer: DeferredAnswer | None = None
        prompter: Prompter = _ThreadPrompter(self, turn)
        prompt = ""
        if await store.exists(turn.session_id):
            kind = WorkKind.FOLLOW_UP
            records = await store.read(turn.session_id)
            turn.handed_seq = records[-1].seq if records else None
            conversation = fold(records)
            typed_answer = next(
                (
                    call
                    for call in conversation.deferred
                    if call.tool_name == question_tool(AnswerKind.INPUT)
                ),
                None,
            )
            if turn.pressed is None and typed_answer is not None and turn.lines:
                # A mention answers a free-text question the run let go of.
                typed = "\n".join(line.text for line in turn.lines)
                turn.pressed = Pressed("", AnswerKind.INPUT, AnswerField.VALUE, text=typed)
                turn.lines = []
            if turn.pressed is not None:
                kind = WorkKind.RESUME
                deferred_answer, prompter = self._late(turn.pressed, conversation, prompter)
        if kind is not WorkKind.RESUME:
            prompt = await self._prompt(turn, opening=kind is WorkKind.START)
        handle, _ = await self._name(turn.starter)

        def started() -> None:
            operator_log(
                "Running",
                channel=CHANNEL_SLACK,
                work=turn.session_id,
                caller=turn.starter,
                resume=turn.session_id if kind is not WorkKind.START else None,
            )
            turn.pump = asyncio.get_running_loop().create_task(self._pump(turn))
            if turn.phase is not Phase.THINKING:
                turn.emit(_STARTED)

        async def done(result: RunResult) -> None:
            await self._finish(turn, result)

        turn.work = Work(
            kind=kind,
            session_id=turn.session_id,
            done=done,
            events=turn,
            prompt=prompt,
            prompter=prompter,
            run_context=started,
            deferred_answer=deferred_answer,
            caller=f"{handle} ({turn.starter})",
            conversation=True,
            resume_advice=_RESUME_ADVICE,
        )
        if self._draining:
            turn.work.suspend.set()
        return turn.work

    def _late(
        self, pressed: Pressed, conversation: Conversation, fallback: Prompter
    ) -> tuple[DeferredAnswer | None, Prompter]:
        """What a late answer does: the result of the question tool's deferred call, or the
        answer to the gate's question when the resumed run asks it again."""
        if pressed.kind is AnswerKind.APPROVE:
            late = pressed.late(pressed.tool_use_id)
            return None, LateAnswerPrompter(late, fallback, reason=pressed.reason)
        call = next(
            (c for c in conversation.deferred if c.tool_name == question_tool(pressed.kind)),
            None,
        )
        if call is None:
            return None, fallback
        option = None
        if pressed.index is not None:
            option = _option(conversation, call.tool_use_id, pressed.index)
        result = deferred_result(pressed.late(call.tool_use_id, option))
        return DeferredAnswer(call.tool_use_id, result), fallback

    async def _prompt(self, turn: _Turn, *, opening: bool) -> str:
        """The turn's prompt: the conversation around it, then its own lines, each prefixed
        with the speaker."""
        context = await self._context(turn, opening=opening)
        parts: list[str] = []
        if context:
            heading = "Earlier in this conversation:" if opening else "Said since my last reply:"
            parts.append(heading + "\n" + "\n".join(context))
        own = [await self._spoken(line.user, line.text) for line in turn.lines]
        parts.append("\n".join(own))
        return "\n\n".join(parts)

    async def _context(self, turn: _Turn, *, opening: bool) -> list[str]:
        limit = self._options.context_lines
        if limit == 0 or not turn.lines:
            return []
        first = turn.lines[0].ts
        thread = turn.thread
        try:
            if opening and thread.ts == first:
                reply = await self._call(
                    "conversations_history", channel=thread.channel, latest=first, limit=limit
                )
                messages = list(reversed(reply.get("messages", []))) if reply else []
            else:
                reply = await self._call(
                    "conversations_replies",
                    channel=thread.channel,
                    ts=thread.ts,
                    latest=first,
                    limit=_HISTORY_PAGE,
                )
                messages = list(reply.get("messages", [])) if reply else []
        except _Refused:
            raise
        except Exception as error:
            _log.warning("reading the conversation around a mention failed: %s", error)
            return []
        if not opening:
            bot = [i for i, m in enumerate(messages) if m.get("user") == self._options.bot_user]
            messages = messages[bot[-1] + 1 :] if bot else messages
        mention = f"<@{self._options.bot_user}>"
        kept = [
            m
            for m in messages
            if str(m.get("ts", "")) < first
            and m.get("user") != self._options.bot_user
            and not m.get("bot_id")
            and mention not in str(m.get("text", ""))
        ][-limit:]
        return [await self._spoken(str(m.get("user", "")), str(m.get("text", ""))) for m in kept]

    async def _spoken(self, user: str, text: str) -> str:
        name = await self._speaker(user)
        return f"{name} <@{user}>: {text}"

    async def _speaker(self, user: str) -> str:
        return (await self._name(user))[1]

    async def _name(self, user: str) -> tuple[str, str]:
        """A person's handle and the name a line is prefixed with: the real name, then the
        display name, then the handle, then the user id."""
        known = self._names.get(user)
        if known is not None:
            return known
        handle, name = user, user
        try:
            reply = await self._web.users_info(user=user)
            found = reply.get("user") or {}
            profile = found.get("profile") or {}
            handle = str(found.get("name") or user)
            name = str(profile.get("real_name") or profile.get("display_name") or handle)
        except SlackApiError as error:
            code = str(error.response.get("error", ""))
            self._check_auth(code)
            advice = "; grant users:read" if code == _MISSING_SCOPE else ""
            _log.warning(
                "Slack user %s is named by id only: users.info failed (%s)%s", user, code, advice
            )
        except Exception as error:
            _log.warning("Slack user %s is named by id only: %s", user, error)
        self._names[user] = (handle, name)
        return handle, name

    def _without_bot(self, text: str) -> str:
        return re.sub(rf"<@{re.escape(self._options.bot_user)}>\s*", "", text).strip()

    # While the run works.

    async def _pump(self, turn: _Turn) -> None:
        while (event := await turn.events.get()) is not None:
            try:
                self._follow_writing(turn, event)
                phase = _phase(event)
                if isinstance(event, WarningEvent) and event.kind in _PROBLEM_LINE:
                    turn.problems.append(_PROBLEM_LINE[event.kind])
                if isinstance(event, ToolResultEvent) and event.timed_out:
                    turn.problems.append(_TIMED_OUT)
                if phase is not None and phase is not turn.phase:
                    self._show(turn, phase)
            except Exception as error:
                _log.warning("updating a Slack status message failed: %s", error)
            finally:
                turn.events.task_done()
        turn.events.task_done()

    def _follow_writing(self, turn: _Turn, event: object) -> None:
        """Keep what the status shows of the model's text: the text of its latest call, which
        a retried call voids and the next call replaces."""
        if isinstance(event, TextDeltaEvent):
            if turn.call_ended:
                turn.writing.clear()
                turn.call_ended = False
            turn.writing.append(event.text)
            self._changed_status(turn)
        elif isinstance(event, StatusEvent):
            if event.phase == StatusPhase.RETRYING:
                turn.writing.clear()
                turn.call_ended = False
                self._changed_status(turn)
            elif event.phase == StatusPhase.CALLING_LLM:
                turn.call_ended = True

    def _show(self, turn: _Turn, reached: Phase) -> None:
        phase = next_phase(turn.phase, reached)
        if phase is turn.phase:
            return
        turn.phase = phase
        self._changed_status(turn)

    def _changed_status(self, turn: _Turn) -> None:
        if turn.status_ts and not self._options.no_progress:
            turn.edits.changed()

    async def _edit_status(self, turn: _Turn) -> None:
        """Edit the status message to show the turn as it stands."""
        line = (turn.phase or Phase.THINKING).value
        await self._call(
            "chat_update",
            paced=True,
            channel=turn.thread.channel,
            ts=turn.status_ts,
            text=line,
            blocks=status_blocks(line, turn=turn.id, stoppable=True, writing="".join(turn.writing)),
        )

    async def _ask(self, turn: _Turn, question: Question) -> Answer:
        work = turn.work
        if work is None or work.suspend.is_set():
            raise QuestionInterrupted("the turn was stopped")
        await turn.events.join()
        question_id = new_ksuid()
        text, blocks = question_blocks(question, question_id, turn.starter)
        posted = await self._call(
            "chat_postMessage",
            channel=turn.thread.channel,
            thread_ts=turn.thread.ts,
            text=text,
            blocks=blocks,
        )
        if not posted:
            raise QuestionInterrupted("the question could not be posted")
        loop = asyncio.get_running_loop()
        live = _LiveQuestion(turn, question, text, str(posted.get("ts", "")), loop.create_future())
        self._questions[question_id] = live
        self._show(turn, Phase.WAITING)
        asked = loop.time()
        grace = self._options.answer_grace.total_seconds()
        fields: dict[str, object] = {
            "channel": CHANNEL_SLACK,
            "caller": turn.starter,
            "question": question_id,
            "session": turn.session_id,
        }
        operator_log(
            "Asked the caller a question",
            **fields,
            kind=question_kind(question).value,
            wait_ms=int(grace * 1000),
        )
        stop = loop.create_task(work.suspend.wait())
        outcome = ""
        try:
            watched: set[asyncio.Future[Any]] = {live.answered, stop}
            done, _ = await asyncio.wait(
                watched, timeout=grace, return_when=asyncio.FIRST_COMPLETED
            )
            if live.answered in done:
                answer = live.answered.result()
                self._show(turn, Phase.THINKING)
                return answer
            if stop in done:
                outcome = "the turn was stopped"
                raise QuestionInterrupted(outcome)
            outcome = "answer_grace passed; the answer is taken whenever it comes"
            raise QuestionUnanswered(outcome)
        except QuestionInterrupted as interrupted:
            outcome = outcome or str(interrupted)
            raise
        finally:
            stop.cancel()
            self._questions.pop(question_id, None)
            held = format_duration(timedelta(seconds=round(loop.time() - asked)))
            if not outcome:
                operator_log("A question was answered", **fields, held=held, acks=0)
            else:
                operator_log("A question was given up", **fields, held=held, reason=outcome)

    # When the run ended.

    async def _finish(self, turn: _Turn, result: RunResult) -> None:
        try:
            if turn.pump is not None:
                turn.events.put_nowait(None)
                with contextlib.suppress(Exception):
                    await turn.pump
            await self._report(turn, result)
        finally:
            async with self._changed:
                self._running.pop(turn.thread, None)
                left = []
                if _keeps_lines_back(result):
                    left = [
                        t for t in self._waiting if t.thread == turn.thread and t.pressed is None
                    ]
                    for waiting in left:
                        self._waiting.remove(waiting)
                self._changed.notify_all()
            self._capacity.release()
            for waiting in left:
                lines = "\n".join(f"> {line.text}" for line in waiting.lines)
                await self._tell(waiting, f":leftwards_arrow_with_hook: I did not get to:\n{lines}")

    async def _report(self, turn: _Turn, result: RunResult) -> None:
        outcome = result.outcome
        operator_log(
            "Ending a run",
            channel=CHANNEL_SLACK,
            caller=turn.starter,
            session=result.session_id,
            outcome=type(outcome).__name__.lower(),
            reason=outcome.message or None,
        )
        answer = outcome.answer if isinstance(outcome, Completed | Declined) else ""
        if not answer.strip():
            if await self._refused_as_changed(turn, outcome):
                line = SETUP_CHANGED
            else:
                line = ending_line(outcome, draining=self._draining)
            await self._tell(turn, line)
        else:
            await turn.edits.stop()
            cut, _ = cut_answer(answer)
            posted = await self._call(
                "chat_postMessage",
                channel=turn.thread.channel,
                thread_ts=turn.thread.ts,
                text=cut,
                blocks=answer_blocks(cut),
            )
            if posted and turn.status_ts:
                link = await self._permalink(turn.thread.channel, str(posted.get("ts", "")))
                line = ending_line(outcome)
                await self._end_status(
                    turn,
                    line,
                    linked_blocks(line, link)
                    if link
                    else status_blocks(line, turn=turn.id, stoppable=False),
                )
        for problem in dict.fromkeys(turn.problems):
            await self._post(turn.thread, f":warning: {problem}")

    async def _refused_as_changed(self, turn: _Turn, outcome: TurnOutcome) -> bool:
        """Whether a follow-up failed because the agent's configuration changed beyond what a
        thread carries on across: such a turn fails before it claims the journal, where any
        run that got under way claims it first, so the journal still ends where it did."""
        if not isinstance(outcome, Failed) or turn.handed_seq is None:
            return False
        try:
            records = await self._resources.store.read(turn.session_id)
        except Exception as error:
            _log.warning("reading the journal of a failed Slack turn failed: %s", error)
            return False
        return bool(records) and records[-1].seq == turn.handed_seq

    async def _tell(self, turn: _Turn, line: str) -> None:
        """The turn's status message says ``line``; without a status message it is posted."""
        if turn.status_ts and not self._options.no_progress:
            await self._end_status(turn, line, status_blocks(line, turn=turn.id, stoppable=False))
        else:
            await self._post(turn.thread, line)

    async def _end_status(self, turn: _Turn, line: str, blocks: list[dict[str, Any]]) -> None:
        """The status message's last edit: what became of the turn, once the pace allows."""
        await turn.edits.last(
            partial(
                self._call,
                "chat_update",
                paced=True,
                channel=turn.thread.channel,
                ts=turn.status_ts,
                text=line,
                blocks=blocks,
            )
        )

    async def _post(self, thread: Thread, text: str) -> None:
        await self._call(
            "chat_postMessage",
            channel=thread.channel,
            thread_ts=thread.ts,
            text=text,
            blocks=[
                {"type": "section", "text": {"type": "plain_text", "text": text, "emoji": True}}
            ],
        )

    async def _permalink(self, channel: str, ts: str) -> str:
        reply = await self._call("chat_getPermalink", channel=channel, message_ts=ts)
        return str(reply.get("permalink", "")) if reply else ""

    async def _call(self, method: str, *, paced: bool = False, **arguments: Any) -> dict[str, Any]:
        """One Web API call; a failure is logged and answered with an empty reply, except that
        Slack refusing the token faults the channel, and a ``paced`` call that Slack finds too
        fast raises ``RateLimited`` so its pace backs off."""
        call: Callable[..., Awaitable[Any]] = getattr(self._web, method)
        try:
            reply = await call(**arguments)
        except SlackApiError as error:
            if paced and error.response.status_code == _RATE_LIMITED:
                raise RateLimited(_retry_after(error.response.headers)) from None
            code = str(error.response.get("error", ""))
            self._check_auth(code)
            _log.warning("Slack %s failed: %s", method.replace("_", "."), code)
            return {}
        except Exception as error:
            _log.warning("Slack %s failed: %s", method.replace("_", "."), error)
            return {}
        return dict(reply.data) if isinstance(reply.data, dict) else {}

    def _check_auth(self, code: str) -> None:
        if code in AUTH_FAILURES:
            error = FiskError(
                f"Slack refused SLACK_BOT_TOKEN ({code}); the worker stops so a supervisor can "
                "restart it with a valid token"
            )
            self._faulted(error)
            raise _Refused(error)

    def app_token_refused(self, code: str) -> None:
        """Slack refused the app-level token when the socket asked for a connection: a fault,
        since no mention can reach the worker any more."""
        self._faulted(
            FiskError(
                f"Slack refused SLACK_APP_TOKEN ({code}) when the socket reconnected; the worker "
                "stops so a supervisor can restart it with a valid app-level token"
            )
        )

    def _faulted(self, error: FiskError) -> None:
        if self._fault is None:
            self._fault = error
            self._in_background(self._wake())

    async def _wake(self) -> None:
        async with self._changed:
            self._changed.notify_all()


class _Refused(Exception):
    def __init__(self, error: FiskError) -> None:
        super().__init__(str(error))
        self.error = error


class _ThreadPrompter:
    """Puts a turn's questions to its thread."""

    def __init__(self, channel: SlackChannel, turn: _Turn) -> None:
        self._channel = channel
        self._turn = turn

    def can_prompt(self) -> bool:
        return True

    async def ask(self, question: Question) -> Answer:
        return await self._channel._ask(self._turn, question)


def _phase(event: object) -> Phase | None:
    if isinstance(event, _Started):
        return Phase.THINKING
    if isinstance(event, ToolCallEvent):
        if event.name.startswith("knowledge_"):
            return Phase.SEARCHING_KNOWLEDGE
        if not event.name.startswith("ask_human_"):
            return Phase.CALLING_TOOLS
    return None


async def _nothing_to_edit() -> None:
    """The progress of a status message only ever edited once, with its ending."""


def _retry_after(headers: Any) -> float:
    """The seconds a rate-limit answer's Retry-After asks for."""
    values = {str(name).lower(): value for name, value in dict(headers or {}).items()}
    value = values.get("retry-after")
    if isinstance(value, list):
        value = value[0] if value else None
    try:
        return max(0.0, float(str(value)))
    except ValueError:
        return _DEFAULT_RETRY_AFTER


def _keeps_lines_back(result: RunResult) -> bool:
    """Whether the turn ended so that mentions folded behind it go back to the thread."""
    return isinstance(result.outcome, Deferred | Suspended | Abandoned | NotRun)


def _option(conversation: Conversation, tool_use_id: str, index: int) -> str | None:
    """The option a selection's deferred call offered at ``index``, as the model wrote it."""
    turns = [conversation.pending_turn, *reversed(conversation.messages)]
    for message in turns:
        if message is None:
            continue
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.id == tool_use_id:
                try:
                    options = json.loads(block.input).get("options") or []
                except (ValueError, AttributeError):
                    return None
                return str(options[index]) if 0 <= index < len(options) else None
    return None
