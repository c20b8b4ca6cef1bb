"""Answering prompts from other agents: one agent-loop turn per request.prompt.

A caller sends a request.prompt on ``task.<identity>``. The engine opens the turn's cancel and
elicit subscriptions, acknowledges (sequence 1, with the conversation token), then publishes the
run's events in order and ends the reply set with a result or an error. Sequences advance only
after a publish succeeded, so the set stays gap-free when one fails.

A message that cannot be read as a request (malformed, oversized, of another protocol) is answered
with the NATS service error headers and code 400. Anything refused after that is a negative ack
followed by a terminal error carrying a code, since an ack on its own closes nothing.

The engine is a channel of the Server (fisk_ai/serve/server.py): intake, refusals, the reply
set, questions and the terminal message are here; running the turn is the Server's. The channel
admits no more turns than it has slots, so a turn it acknowledged always finds one.

No conversation is held between turns. Each turn runs in a fresh Runner over the journal named
``t-`` + sha256hex(identity + NUL + token), so any member of the queue group can take any turn.
`fisk serve` gives the Runner interactive settings, which is what leaves a completed turn open
for the next one (and its close journals the conversation as suspended between turns). A run a
terminal hosts for itself names its conversations as local runs are named instead (``LOCAL``):
the token is a KSUID and the journal carries it as its id, since the terminal is the only caller
and `fisk run --resume` takes the session id it printed.

A cancel sets the Runner's suspend event: the run parks at its next boundary and ends suspended.
It also gives up a question in flight. Silence on a question until its window closes ends the run
suspended too, whatever asked; the question is asked again when the conversation continues.

A request.resume continues a conversation's run where it stopped, without a new prompt.

A request.answer supplies, after the run ended, the answer to a question it stopped on, then
resumes the run on the same reply set. A deferred call takes the answer as its result; any other
call named is answered from the request when the resumed run asks again. It is checked before
the ack, so a refused answer starts nothing.

A request.read replays the end of a stored conversation between a replay_start and a replay_end
status and closes with a result. It runs no model and writes nothing, so it holds no worker slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, cast

from fisk_ai.a2a.codec import DEFAULT_MAX_MESSAGE_SIZE, decode, encode
from fisk_ai.a2a.errors import A2AError, InvalidMessage, MessageTooLarge
from fisk_ai.a2a.events import event_reply
from fisk_ai.a2a.messages import (
    Ack,
    AnswerField,
    AnswerKind,
    Cancel,
    Direction,
    ElicitChoice,
    ElicitReplyApprove,
    ElicitReplyConfirm,
    ElicitReplyInput,
    ElicitReplyNoOperator,
    ElicitReplySelect,
    ElicitRequestApprove,
    ElicitRequestConfirm,
    ElicitRequestInput,
    ElicitRequestSelect,
    ElicitWaiting,
    ErrorCode,
    EventStatus,
    EventText,
    EventToolResult,
    Header,
    Identity,
    Message,
    RequestAnswer,
    RequestPrompt,
    RequestRead,
    RequestResume,
    StatusBody,
    StopReason,
    TerminalError,
    TerminalResult,
    WireUsage,
    reply_header,
    reply_to,
)
from fisk_ai.a2a.messages import Answer as LateAnswer
from fisk_ai.a2a.messages import Budget as WireBudget
from fisk_ai.a2a.outcome import terminal_message
from fisk_ai.a2a.prompts_client import KEEPALIVE_INTERVAL, MAX_REPLAY_BLOCKS
from fisk_ai.a2a.transport import (
    Delivery,
    Subscription,
    Transport,
    cancel_subject,
    elicit_subject,
    service_error_headers,
    task_subject,
)
from fisk_ai.agent.events import Event
from fisk_ai.agent.hooks import Hooks
from fisk_ai.agent.loop import CurrentTools
from fisk_ai.agent.outcome import RunResult
from fisk_ai.agent.prompt import SystemPrompt
from fisk_ai.agent.replay import conversation_turns, replay_window
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.llm.types import Provider
from fisk_ai.serve.server import (
    Budget,
    DeferredAnswer,
    Resources,
    Server,
    Work,
    WorkKind,
    lowered,
)
from fisk_ai.sessions.errors import SessionError, SessionNotFound
from fisk_ai.sessions.fold import fold
from fisk_ai.sessions.store import SessionStore
from fisk_ai.tools.builtin.hitl import ASK_HUMAN_CONFIRM, ASK_HUMAN_INPUT, ASK_HUMAN_SELECT
from fisk_ai.tools.questions import (
    Answer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    InputQuestion,
    NoOperator,
    Prompter,
    Question,
    QuestionInterrupted,
    QuestionUnanswered,
    SelectQuestion,
)
from fisk_ai.tools.toolset import ToolSet
from fisk_ai.util.ids import new_ksuid

__all__ = [
    "KEEPALIVE_INTERVAL",
    "KEEPALIVE_PHASE",
    "LOCAL",
    "MAX_ANSWER_BYTES",
    "MAX_REPLAY_BLOCKS",
    "NOT_FOUND",
    "REPLAY_END_PHASE",
    "REPLAY_START_PHASE",
    "SERVED",
    "ConversationNaming",
    "PromptsChannel",
    "PromptsServer",
    "conversation_session_id",
    "new_conversation_token",
]

KEEPALIVE_PHASE = "working"
REPLAY_START_PHASE = "replay_start"
REPLAY_END_PHASE = "replay_end"
MAX_ANSWER_BYTES = 4096
NOT_FOUND = 404

_log = logging.getLogger(__name__)

_ElicitReply = (
    ElicitReplyApprove
    | ElicitReplyConfirm
    | ElicitReplySelect
    | ElicitReplyInput
    | ElicitReplyNoOperator
)
_Turnable = RequestPrompt | RequestResume | RequestAnswer
_HITL_TOOL_FOR_KIND = {
    AnswerKind.CONFIRM: ASK_HUMAN_CONFIRM,
    AnswerKind.SELECT: ASK_HUMAN_SELECT,
    AnswerKind.INPUT: ASK_HUMAN_INPUT,
}
_NOBODY_ANSWERED = "nobody was there to answer"


def new_conversation_token() -> str:
    """A fresh conversation token: 128 random bits in the subject-safe alphabet."""
    return secrets.token_urlsafe(16)


def conversation_session_id(identity: str, token: str) -> str:
    """The journal a conversation token names on agent ``identity``."""
    digest = hashlib.sha256(f"{identity}\x00{token}".encode()).hexdigest()
    return f"t-{digest}"


@dataclass(frozen=True)
class ConversationNaming:
    """How an engine mints conversation tokens and names the journal a token stands for."""

    new_token: Callable[[], str]
    session_id: Callable[[str, str], str]
    """(identity, token) -> the session id of the conversation's journal."""


SERVED = ConversationNaming(new_conversation_token, conversation_session_id)
LOCAL = ConversationNaming(new_ksuid, lambda _identity, token: token)


class _Gone(A2AError):
    """An answer to a question nobody is waiting on any more."""

    default_service_code = NOT_FOUND


class _ReplySet:
    """The messages answering one request, numbered from 1 without gaps. One writer at a time:
    the lock orders the run's events, its questions and the terminal message."""

    def __init__(
        self,
        transport: Transport,
        request: Header,
        inbox: str,
        sender: Identity,
        max_size: int,
    ) -> None:
        self._transport = transport
        self._request = request
        self._inbox = inbox
        self._sender = sender
        self._max_size = max_size
        self._sequence = 1
        self._lock = asyncio.Lock()
        self.last_sent = asyncio.get_running_loop().time()

    async def send(self, build: Callable[[int], Message]) -> bool:
        async with self._lock:
            try:
                data = _encode_fitting(build(self._sequence), self._max_size)
                await self._transport.publish(self._inbox, data)
            except Exception:
                _log.exception("answering request %s failed", self._request.request)
                return False
            self._sequence += 1
            self.last_sent = asyncio.get_running_loop().time()
            return True

    async def reply(self, cls: type[Header], **fields: Any) -> bool:
        def build(sequence: int) -> Message:
            return cast(
                Message,
                reply_to(self._request, cls, sender=self._sender, sequence=sequence, **fields),
            )

        return await self.send(build)

    async def refuse(self, code: ErrorCode, text: str, **fields: Any) -> None:
        if await self.reply(Ack, accepted=False, reason=text):
            await self.reply(TerminalError, error=text, code=code, **fields)


def _encode_fitting(message: Message, max_size: int) -> bytes:
    """The message's bytes; the prose of a message over the size cap is cut short rather than
    the message dropped, since a dropped message would leave no gap a caller could notice."""
    try:
        return encode(message, max_size=max_size)
    except MessageTooLarge:
        trim = _trimmer(message)
        if trim is None:
            raise
    text, rebuild = trim
    while True:
        text = text[: len(text) // 2]
        try:
            return encode(rebuild(text), max_size=max_size)
        except MessageTooLarge:
            if not text:
                raise


def _trimmer(message: Message) -> tuple[str, Callable[[str], Message]] | None:
    match message:
        case TerminalResult():
            return message.text, lambda text: message.model_copy(update={"text": text})
        case TerminalError():
            return message.error, lambda text: message.model_copy(update={"error": text})
        case EventText():
            return message.block.text, lambda text: message.model_copy(
                update={"block": message.block.model_copy(update={"text": text})}
            )
        case EventToolResult():
            return message.block.output, lambda text: message.model_copy(
                update={"block": message.block.model_copy(update={"output": text})}
            )
        case _:
            return None


class _Sink:
    """The run's event sink: emit must not block, so events queue for the publishing task."""

    def __init__(self, queue: asyncio.Queue[Event | None]) -> None:
        self._queue = queue

    def emit(self, event: Event) -> None:
        self._queue.put_nowait(event)


@dataclasses.dataclass(eq=False)
class _Question:
    kind: Question
    answered: asyncio.Future[Answer]
    waiting: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)


class _Turn:
    """One accepted prompt: its reply set, its stop gate, the questions it has out, and the
    tasks publishing its events while it runs."""

    def __init__(
        self, request: _Turnable, replies: _ReplySet, stream: bool, session_id: str
    ) -> None:
        self.request = request
        self.replies = replies
        self.stream = stream
        self.session_id = session_id
        self.suspend = asyncio.Event()
        self.questions: dict[str, _Question] = {}
        self.held = 0
        self.late_answer: _LateAnswerPrompter | None = None
        self.events: asyncio.Queue[Event | None] = asyncio.Queue()
        self.subscriptions: list[Subscription] = []
        self.pump: asyncio.Task[None] | None = None
        self.keepalive: asyncio.Task[None] | None = None


class _LateAnswerPrompter:
    """Answers, from a request.answer, the question the resumed run asks again for the call it
    names; every other question goes to ``fallback``. An approval is matched by its call id;
    the human-in-the-loop questions carry none, so the first one of the answer's kind is taken,
    which the check before the ack made the named call's."""

    def __init__(self, answer: LateAnswer, fallback: Prompter) -> None:
        self._answer = answer
        self._fallback = fallback
        self.spent = False

    def can_prompt(self) -> bool:
        return not self.spent or self._fallback.can_prompt()

    async def ask(self, question: Question) -> Answer:
        if not self.spent and self._matches(question):
            self.spent = True
            return _late_answer_for(question, self._answer)
        if not self._fallback.can_prompt():
            return await NoOperator().ask(question)
        return await self._fallback.ask(question)

    def _matches(self, question: Question) -> bool:
        match question:
            case ApprovalQuestion():
                return self._answer.kind is AnswerKind.APPROVE and (
                    question.tool_use_id == self._answer.tool_use_id
                )
            case ConfirmQuestion():
                return self._answer.kind is AnswerKind.CONFIRM
            case SelectQuestion():
                return self._answer.kind is AnswerKind.SELECT
            case InputQuestion():
                return self._answer.kind is AnswerKind.INPUT


def _late_answer_for(question: Question, late: LateAnswer) -> Answer:
    """The Prompter answer a late answer gives ``question``. A selection names its option, so
    one naming no option offered is no selection."""
    if late.answer is AnswerField.NO_OPERATOR:
        return ApprovalChoice.NO if isinstance(question, ApprovalQuestion) else None
    match question:
        case ApprovalQuestion():
            return ApprovalChoice((late.choice or ElicitChoice.NO).value)
        case ConfirmQuestion():
            return bool(late.confirmed)
        case SelectQuestion():
            options = list(question.options)
            return options.index(late.value) if late.value in options else None
        case InputQuestion():
            return late.value or ""


def _deferred_result(late: LateAnswer) -> str:
    """A deferred call's result as a late answer gives it, shaped as the human-in-the-loop
    tools shape theirs so the model reads one format."""
    nobody = late.answer is AnswerField.NO_OPERATOR
    result: dict[str, Any]
    match late.kind:
        case AnswerKind.APPROVE:
            choice = ElicitChoice.NO if nobody else (late.choice or ElicitChoice.NO)
            result = {"choice": choice.value}
        case AnswerKind.CONFIRM:
            result = {"confirmed": False if nobody else bool(late.confirmed)}
        case AnswerKind.SELECT:
            result = {"selected": None if nobody else late.value}
        case AnswerKind.INPUT:
            result = {"value": None if nobody else late.value}
    if nobody:
        result["reason"] = _NOBODY_ANSWERED
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


class _ElicitPrompter:
    """Puts the run's questions to the caller on its reply set and waits for the answer on the
    turn's elicit subject. Each elicit.waiting restarts the window; silence or a cancel gives
    the question up, which stops the run suspended."""

    def __init__(self, channel: PromptsChannel, turn: _Turn, flush: Callable[[], Any]) -> None:
        self._channel = channel
        self._turn = turn
        self._flush = flush

    def can_prompt(self) -> bool:
        # A canceled turn still asks, so the question is given up (and the run parks) rather
        # than answered as a refusal nobody gave.
        return True

    async def ask(self, question: Question) -> Answer:
        turn = self._turn
        if turn.suspend.is_set():
            raise QuestionInterrupted("the caller canceled the request")
        await self._flush()
        question_id = new_ksuid()
        window = self._channel.request_timeout
        common: dict[str, Any] = {
            "question_id": question_id,
            "wait_ms": int(window.total_seconds() * 1000),
        }
        cls: type[Header]
        match question:
            case ApprovalQuestion():
                cls = ElicitRequestApprove
                common |= {
                    "tool_use_id": question.tool_use_id,
                    "command": question.command,
                    "display": question.display,
                    "tag": question.trigger,
                }
            case ConfirmQuestion():
                cls = ElicitRequestConfirm
                common |= {"question": question.question}
            case SelectQuestion():
                cls = ElicitRequestSelect
                common |= {"question": question.question, "options": question.options}
            case InputQuestion():
                cls = ElicitRequestInput
                common |= {"question": question.question, "default": question.default or None}
        pending = _Question(question, asyncio.get_running_loop().create_future())
        turn.questions[question_id] = pending
        turn.held += 1
        try:
            if not await turn.replies.reply(cls, **common):
                raise QuestionInterrupted("the question could not be sent to the caller")
            return await self._wait(pending, window)
        finally:
            turn.held -= 1
            turn.questions.pop(question_id, None)

    async def _wait(self, pending: _Question, window: timedelta) -> Answer:
        stop = asyncio.get_running_loop().create_task(self._turn.suspend.wait())
        try:
            while True:
                pending.waiting.clear()
                restart = asyncio.get_running_loop().create_task(pending.waiting.wait())
                watched: set[asyncio.Future[Any]] = {pending.answered, restart, stop}
                done, _ = await asyncio.wait(
                    watched,
                    timeout=window.total_seconds(),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                restart.cancel()
                if pending.answered in done:
                    return pending.answered.result()
                if stop in done:
                    raise QuestionInterrupted("the caller canceled the request")
                if self._channel.draining:
                    raise QuestionInterrupted("the agent is draining and stopped waiting")
                if restart not in done:
                    raise QuestionUnanswered("the caller did not answer the question in time")
        finally:
            stop.cancel()


def _answer_for(question: Question, reply: _ElicitReply) -> Answer:
    """The Prompter answer a reply carries; raises InvalidMessage when it answers another kind
    of question than the one asked."""
    match question, reply:
        case ApprovalQuestion(), ElicitReplyNoOperator():
            return ApprovalChoice.NO
        case _, ElicitReplyNoOperator():
            return None
        case ApprovalQuestion(), ElicitReplyApprove():
            return ApprovalChoice(reply.choice.value)
        case ConfirmQuestion(), ElicitReplyConfirm():
            return reply.confirmed
        case SelectQuestion(), ElicitReplySelect():
            if reply.index >= len(question.options):
                raise InvalidMessage(
                    f"index {reply.index} is past the {len(question.options)} options offered"
                )
            return reply.index
        case InputQuestion(), ElicitReplyInput():
            return reply.value
    raise InvalidMessage(f"{reply.protocol} does not answer the question asked")


class PromptsChannel:
    """The a2a prompts channel of agent ``identity``: it takes request.prompt, request.resume
    and request.answer on ``task.<identity>``, refuses what it cannot take, and hands the rest
    to a Server as Work, at most ``workers`` at a time. request.read is answered here, since it
    runs no model. With ``elicit`` the run's questions go to the caller, each held for
    ``request_timeout``; without it nobody is asked and gated calls are refused.

    ``settings`` are the agent's, used to tell a caller the limit its budget leaves; ``tools``
    and ``store`` are the ones the Server's runs use.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        identity: str,
        settings: AgentSettings,
        tools: ToolSet | CurrentTools,
        store: SessionStore,
        workers: int,
        request_timeout: timedelta,
        elicit: bool = False,
        keepalive_interval: timedelta = KEEPALIVE_INTERVAL,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        naming: ConversationNaming = SERVED,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self._transport = transport
        self._identity = Identity(name=identity)
        self._settings = settings
        self._tools = tools
        self._store = store
        self.workers = workers
        self.request_timeout = request_timeout
        self._elicit = elicit
        self._keepalive_seconds = keepalive_interval.total_seconds()
        self._max_message_size = max_message_size
        self.naming = naming
        self.draining = False
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._in_flight: set[str] = set()
        self._admitted: asyncio.Queue[Work | None] = asyncio.Queue()
        self._subscription: Subscription | None = None

    @property
    def name(self) -> str:
        return f"a2a prompts {self._identity.name}"

    @property
    def identity(self) -> str:
        return self._identity.name

    @property
    def task_subject(self) -> str:
        return task_subject(self._identity.name)

    @property
    def turns_running(self) -> int:
        """Turns acknowledged whose terminal message is not yet sent."""
        return self._busy

    async def open(self) -> None:
        """Start taking requests."""
        self._subscription = await self._transport.subscribe(
            self.task_subject, self._on_task, queue=self._identity.name
        )

    async def next(self) -> Work | None:
        work = await self._admitted.get()
        if work is None:
            # Closed: every later call gets the same answer.
            self._admitted.put_nowait(None)
        return work

    async def close(self) -> None:
        """Take no more prompts: the shutdown gate closes first, so intake refuses rather than
        acknowledging something nothing will run; then the queue group is left. Turns already
        running carry on; a question out stops having its window restarted."""
        if self.draining:
            return
        self.draining = True
        if self._subscription is not None:
            subscription, self._subscription = self._subscription, None
            await subscription.unsubscribe()
        self._admitted.put_nowait(None)

    async def wait_idle(self) -> None:
        """Return once every acknowledged turn has had its terminal message."""
        while self._busy:
            await self._idle.wait()

    async def _on_task(self, delivery: Delivery) -> None:
        if not delivery.reply:
            _log.debug("a prompt on %s came with nowhere to reply; ignored", delivery.subject)
            return
        try:
            message = decode(
                delivery.data, direction=Direction.TO_AGENT, max_size=self._max_message_size
            )
        except A2AError as error:
            await self._refuse_message(delivery, error)
            return
        if isinstance(message, RequestRead):
            await self._read(message, self._replies(message, delivery.reply))
            return
        if not isinstance(message, _Turnable):
            await self._refuse_message(
                delivery,
                InvalidMessage(
                    f"{delivery.subject} takes request messages, not {message.protocol}"
                ),
            )
            return
        await self._accept(message, self._replies(message, delivery.reply))

    def _replies(self, request: Header, inbox: str) -> _ReplySet:
        return _ReplySet(self._transport, request, inbox, self._identity, self._max_message_size)

    async def _accept(self, request: _Turnable, replies: _ReplySet) -> None:
        if self.draining:
            await replies.refuse(
                ErrorCode.DRAINING,
                f"agent {self.identity} is draining and takes no new prompts; retry",
            )
            return
        # Admitted turns never outnumber the slots, so an admitted turn always finds one.
        if self._busy >= self.workers:
            await replies.refuse(
                ErrorCode.CAPACITY,
                f"agent {self.identity} is answering {self.workers} prompts, its limit; retry, "
                "and the next free member of its queue group takes it",
            )
            return
        token = request.conversation_token
        follow_up = token is not None
        if token is None:
            token = self.naming.new_token()
        session_id = self.naming.session_id(self.identity, token)
        if session_id in self._in_flight:
            await replies.refuse(
                ErrorCode.CONVERSATION_BUSY,
                "a turn of this conversation is still running; wait for its terminal message",
            )
            return
        if follow_up and not await self._conversation_exists(session_id):
            await replies.refuse(
                ErrorCode.UNKNOWN_CONVERSATION,
                f"agent {self.identity} holds no conversation for that token; send the prompt "
                "without conversation_token to start one",
            )
            return

        deferred = False
        if isinstance(request, RequestAnswer):
            try:
                refusal, deferred = await self._check_answer(request.answer, session_id)
            except SessionError as error:
                refusal = (ErrorCode.FAILED, str(error))
            if refusal is not None:
                await replies.refuse(*refusal)
                return

        turn = _Turn(request, replies, request.stream, session_id)
        # Opened before the ack: a cancel arriving early waits, one arriving at nobody is lost.
        try:
            turn.subscriptions.append(
                await self._transport.subscribe(
                    cancel_subject(self.identity, request.request),
                    lambda delivery: self._on_cancel(turn, delivery),
                )
            )
            if self._elicit:
                turn.subscriptions.append(
                    await self._transport.subscribe(
                        elicit_subject(self.identity, request.request),
                        lambda delivery: self._on_elicit(turn, delivery),
                    )
                )
        except Exception:
            _log.exception("subscribing for request %s failed", request.request)
            await _unsubscribe(turn.subscriptions)
            await replies.refuse(
                ErrorCode.FAILED, f"agent {self.identity} could not open the turn's subjects"
            )
            return

        budget = _budget(request.budget)
        self._hold(session_id)
        if not await replies.reply(
            Ack,
            accepted=True,
            conversation_token=token,
            max_tokens=lowered(self._settings, budget).max_tokens,
        ):
            self._release(session_id)
            await _unsubscribe(turn.subscriptions)
            return
        self._admitted.put_nowait(self._work(turn, follow_up, budget, deferred))

    def _work(self, turn: _Turn, follow_up: bool, budget: Budget | None, deferred: bool) -> Work:
        request = turn.request
        prompter: Prompter | None = (
            _ElicitPrompter(self, turn, turn.events.join) if self._elicit else None
        )
        kind = WorkKind.RESUME
        prompt = ""
        answered: DeferredAnswer | None = None
        if isinstance(request, RequestAnswer):
            late = request.answer
            turn.late_answer = _LateAnswerPrompter(late, prompter or NoOperator())
            # A deferred call takes the answer as its result, so the resumed run does not ask.
            turn.late_answer.spent = deferred
            prompter = turn.late_answer
            if deferred:
                answered = DeferredAnswer(late.tool_use_id, _deferred_result(late))
        elif isinstance(request, RequestPrompt):
            kind = WorkKind.FOLLOW_UP if follow_up else WorkKind.START
            prompt = _prompt_text(request)

        async def done(outcome: RunResult) -> None:
            await self._finish(turn, outcome)

        return Work(
            kind=kind,
            session_id=turn.session_id,
            done=done,
            events=_Sink(turn.events),
            prompt=prompt,
            force=request.force,
            budget=budget,
            prompter=prompter,
            suspend=turn.suspend,
            run_context=lambda: self._begin(turn),
            deferred_answer=answered,
        )

    def _hold(self, session_id: str) -> None:
        self._busy += 1
        self._idle.clear()
        self._in_flight.add(session_id)

    def _release(self, session_id: str) -> None:
        self._busy -= 1
        self._in_flight.discard(session_id)
        if not self._busy:
            self._idle.set()

    def _begin(self, turn: _Turn) -> None:
        """The turn's run is starting: its events go out, and quiet spells get keepalives."""
        loop = asyncio.get_running_loop()
        turn.pump = loop.create_task(self._publish_events(turn), name="a2a prompt events")
        turn.keepalive = loop.create_task(self._keep_alive(turn), name="a2a prompt keepalive")

    async def _finish(self, turn: _Turn, outcome: RunResult) -> None:
        """The turn is over, whether it ran, crashed, or was given up: the events it emitted go
        out, then its terminal message."""
        turn.events.put_nowait(None)
        if turn.pump is not None:
            await turn.pump
        if turn.keepalive is not None:
            turn.keepalive.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await turn.keepalive
        await _unsubscribe(turn.subscriptions)
        self._release(turn.session_id)
        identity = self.identity
        await turn.replies.send(
            lambda sequence: terminal_message(
                outcome,
                reply_header(turn.request, sender=self._identity, sequence=sequence),
                identity=identity,
            )
        )

    async def _read(self, request: RequestRead, replies: _ReplySet) -> None:
        """Replay the end of a stored conversation. A read runs no model and writes nothing, so
        it takes no worker slot and may read a conversation whose turn is running."""
        if self.draining:
            await replies.refuse(
                ErrorCode.DRAINING,
                f"agent {self.identity} is draining and takes no requests; retry",
            )
            return
        session_id = self.naming.session_id(self.identity, request.conversation_token)
        try:
            conversation = fold(await self._store.read(session_id))
        except SessionNotFound:
            await replies.refuse(
                ErrorCode.UNKNOWN_CONVERSATION,
                f"agent {self.identity} holds no conversation for that token; check "
                "conversation_token",
            )
            return
        except SessionError as error:
            await replies.refuse(ErrorCode.FAILED, str(error))
            return
        tools = self._tools if isinstance(self._tools, ToolSet) else self._tools()
        window = replay_window(
            conversation_turns(conversation, tools), request.replay, MAX_REPLAY_BLOCKS
        )
        usage = WireUsage.from_usage(
            conversation.usage,
            llm_calls=conversation.llm_calls,
            tool_calls=conversation.tool_calls,
            remote_tool_calls=conversation.remote_tool_calls,
        )
        if not await replies.reply(
            Ack, accepted=True, conversation_token=request.conversation_token
        ):
            return
        if not await replies.reply(EventStatus, block=StatusBody(phase=REPLAY_START_PHASE)):
            return
        for event in window.events:
            build = self._event_builder(request, event)
            if not await replies.send(build):
                return
        end = StatusBody(
            phase=REPLAY_END_PHASE,
            count=len(window.events),
            truncated=window.truncated,
            usage=usage,
        )
        if await replies.reply(EventStatus, block=end):
            await replies.reply(TerminalResult, stop_reason=StopReason.END_TURN, usage=usage)

    async def _check_answer(
        self, late: LateAnswer, session_id: str
    ) -> tuple[tuple[ErrorCode, str] | None, bool]:
        """Why a late answer cannot be taken (None when it can), and whether it answers a
        deferred call."""
        if late.value is not None and len(late.value.encode()) > MAX_ANSWER_BYTES:
            return (
                ErrorCode.ANSWER_TOO_LARGE,
                f"the answer's value is over {MAX_ANSWER_BYTES} bytes; shorten answer.value",
            ), False
        conversation = fold(await self._store.read(session_id))
        call_id = late.tool_use_id
        if conversation.is_answered(call_id):
            return (
                ErrorCode.ALREADY_ANSWERED,
                f"call {call_id} was already answered; send a request.resume to continue",
            ), False
        if any(deferred.tool_use_id == call_id for deferred in conversation.deferred):
            return None, True
        waiting = next((block for block in conversation.pending if block.id == call_id), None)
        if waiting is None:
            return (
                ErrorCode.UNKNOWN_CALL,
                f"the conversation is not waiting on call {call_id}; check answer.tool_use_id",
            ), False
        expected = _HITL_TOOL_FOR_KIND.get(late.kind)
        if expected is not None and waiting.name != expected:
            return (
                ErrorCode.REJECTED,
                f"call {call_id} is to {waiting.name}, which a {late.kind} answer does not "
                "answer; check answer.kind",
            ), False
        return None, False

    async def _conversation_exists(self, session_id: str) -> bool:
        try:
            return await self._store.exists(session_id)
        except SessionError:
            return False

    async def _publish_events(self, turn: _Turn) -> None:
        events = turn.events
        while True:
            event = await events.get()
            try:
                if event is None:
                    return
                if turn.stream:
                    await turn.replies.send(self._event_builder(turn.request, event))
            finally:
                events.task_done()

    def _event_builder(self, request: Header, event: Event) -> Callable[[int], Message]:
        def build(sequence: int) -> Message:
            return event_reply(request, event, sender=self._identity, sequence=sequence)

        return build

    async def _keep_alive(self, turn: _Turn) -> None:
        """A status now and then so the caller can tell a long model call from a lost worker;
        none while a question is out, since the caller is holding that one open itself."""
        while True:
            await asyncio.sleep(self._keepalive_seconds)
            idle = asyncio.get_running_loop().time() - turn.replies.last_sent
            if turn.held == 0 and idle >= self._keepalive_seconds:
                await turn.replies.reply(EventStatus, block=StatusBody(phase=KEEPALIVE_PHASE))

    async def _on_cancel(self, turn: _Turn, delivery: Delivery) -> None:
        try:
            message = decode(
                delivery.data, direction=Direction.TO_AGENT, max_size=self._max_message_size
            )
            if not isinstance(message, Cancel):
                raise InvalidMessage(f"{delivery.subject} takes cancel messages only")
        except A2AError as error:
            await self._refuse_message(delivery, error)
            return
        turn.suspend.set()
        await self._acknowledge(message, delivery)

    async def _on_elicit(self, turn: _Turn, delivery: Delivery) -> None:
        try:
            message = decode(
                delivery.data, direction=Direction.TO_AGENT, max_size=self._max_message_size
            )
            if not isinstance(
                message,
                ElicitWaiting
                | ElicitReplyApprove
                | ElicitReplyConfirm
                | ElicitReplySelect
                | ElicitReplyInput
                | ElicitReplyNoOperator,
            ):
                raise InvalidMessage(f"{delivery.subject} takes elicit replies and waiting only")
            pending = turn.questions.get(message.question_id)
            if pending is None or pending.answered.done():
                raise _Gone(f"question {message.question_id} is not waiting for an answer")
            if isinstance(message, ElicitWaiting):
                if not self.draining:
                    pending.waiting.set()
            else:
                pending.answered.set_result(_answer_for(pending.kind, message))
        except A2AError as error:
            await self._refuse_message(delivery, error)
            return
        await self._acknowledge(message, delivery)

    async def _acknowledge(self, message: Header, delivery: Delivery) -> None:
        if not delivery.reply:
            return
        ack = reply_to(message, Ack, sender=self._identity, accepted=True)
        await self._answer(delivery.reply, encode(ack, max_size=self._max_message_size))

    async def _refuse_message(self, delivery: Delivery, error: A2AError) -> None:
        if delivery.reply:
            await self._answer(delivery.reply, b"", headers=service_error_headers(error))

    async def _answer(
        self, inbox: str, data: bytes, *, headers: dict[str, str] | None = None
    ) -> None:
        try:
            await self._transport.publish(inbox, data, headers=headers)
        except Exception:
            _log.exception("answering on %s failed", inbox)


class PromptsServer:
    """Answers request.prompt for agent ``identity`` on a transport, ``workers`` at a time: the
    a2a prompts channel on a Server of its own.

    Each turn runs in a new Runner built from ``settings``, ``provider``, ``tools``, ``store``,
    ``system`` and ``hooks``. With ``elicit`` the run's questions go to the caller, each held for
    ``request_timeout``; without it nobody is asked and gated calls are refused.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        identity: str,
        settings: AgentSettings,
        provider: Provider,
        tools: ToolSet | CurrentTools,
        store: SessionStore,
        workers: int,
        request_timeout: timedelta,
        elicit: bool = False,
        system: SystemPrompt | None = None,
        hooks: Hooks | None = None,
        keepalive_interval: timedelta = KEEPALIVE_INTERVAL,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        naming: ConversationNaming = SERVED,
    ) -> None:
        self.channel = PromptsChannel(
            transport,
            identity=identity,
            settings=settings,
            tools=tools,
            store=store,
            workers=workers,
            request_timeout=request_timeout,
            elicit=elicit,
            keepalive_interval=keepalive_interval,
            max_message_size=max_message_size,
            naming=naming,
        )
        resources = Resources(settings, provider, tools, store, system=system, hooks=hooks)
        self._server = Server(resources, [(self.channel, workers)])
        self._serving: asyncio.Task[None] | None = None

    @property
    def identity(self) -> str:
        return self.channel.identity

    @property
    def task_subject(self) -> str:
        return self.channel.task_subject

    @property
    def turns_running(self) -> int:
        return self.channel.turns_running

    @property
    def request_timeout(self) -> timedelta:
        return self.channel.request_timeout

    @property
    def draining(self) -> bool:
        return self.channel.draining

    @property
    def naming(self) -> ConversationNaming:
        return self.channel.naming

    @property
    def serving(self) -> asyncio.Task[None] | None:
        """The Server's work once started: it ends when the channel is drained and its turns
        are over, raising the channel's fault if it had one."""
        return self._serving

    async def start(self) -> None:
        await self.channel.open()
        self._serving = asyncio.get_running_loop().create_task(
            self._server.serve(), name=f"serve {self.channel.name}"
        )

    async def drain(self) -> None:
        """Take no more prompts: leave the queue group and refuse what still arrives. Turns
        already running carry on; a question out stops having its window restarted."""
        await self._server.drain()

    async def wait_idle(self) -> None:
        """Return once no turn is running."""
        await self.channel.wait_idle()

    async def close(self) -> None:
        """Drain, then abandon the turns still running; each caller gets a terminal message. A
        fault is reported through ``serving``, not raised here."""
        await self._server.stop()
        if self._serving is not None:
            await asyncio.gather(self._serving, return_exceptions=True)


def _budget(budget: WireBudget | None) -> Budget | None:
    if budget is None:
        return None
    return Budget(max_tokens=budget.max_tokens or 0, max_iterations=budget.max_iterations or 0)


def _prompt_text(request: RequestPrompt) -> str:
    return f"{request.prompt}\n\n{request.context}" if request.context else request.prompt


def _error(code: ErrorCode, text: str, **fields: Any) -> tuple[type[Header], dict[str, Any]]:
    return TerminalError, {"error": text or str(code), "code": code, **fields}


async def _unsubscribe(subscriptions: list[Subscription]) -> None:
    for subscription in subscriptions:
        with contextlib.suppress(Exception):
            await subscription.unsubscribe()
