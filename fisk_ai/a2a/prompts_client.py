"""Sending prompts to another agent and reading its reply sets: the caller's side of prompts.

A ``PromptsClient`` talks to one agent on one transport. ``ask`` sends a request.prompt on the
agent's task subject and reads the reply set in sequence order: the ack, the events (passed to
``on_event``), the questions (answered through the given prompter, holding each open with
elicit.waiting every wait_ms / 3 while a person thinks), and the terminal result or error, which
it returns. ``resume``, ``answer`` and ``read`` send the other requests and read their reply sets
the same way; ``cancel`` asks a running turn to stop. A refused request is a terminal error like
any other, not an exception; a peer that does not answer at all, or a reply set with a hole in
it, raises.

The idle limit applies to the gap between two messages rather than to the whole turn, since a run
may think for a long time without being stuck. It is floored at three keepalive intervals, and it
does not run while one of our questions is in front of a person.

The constants a serving engine and its callers share live here, on the protocol's side.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from fisk_ai import telemetry
from fisk_ai.a2a.client import DEFAULT_CLIENT_IDENTITY
from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import (
    A2AError,
    InvalidMessage,
    NoResponders,
    RequestTimeout,
)
from fisk_ai.a2a.messages import (
    Ack,
    Budget,
    Cancel,
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
    EventMessage,
    Identity,
    Message,
    RequestAnswer,
    RequestPrompt,
    RequestRead,
    RequestResume,
    TerminalError,
    TerminalResult,
    UnknownEvent,
    new_request,
    reply_header,
)
from fisk_ai.a2a.messages import Answer as LateAnswer
from fisk_ai.a2a.transport import (
    Delivery,
    Transport,
    cancel_subject,
    elicit_subject,
    reply_failure,
    task_subject,
)
from fisk_ai.a2a.vocabulary import Direction, ElicitChoice
from fisk_ai.telemetry import current_traceparent
from fisk_ai.tools.questions import (
    Answer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    DeclineWithReason,
    InputQuestion,
    NoOperator,
    Prompter,
    Question,
    QuestionInterrupted,
    SelectQuestion,
)
from fisk_ai.util.cancelling import cancel_and_wait
from fisk_ai.util.ids import new_ksuid

__all__ = [
    "KEEPALIVE_INTERVAL",
    "MAX_REPLAY_BLOCKS",
    "ElicitRequest",
    "EventCallback",
    "PromptsClient",
    "Terminal",
    "TurnOptions",
    "idle_limit",
]

KEEPALIVE_INTERVAL = timedelta(seconds=10)
"""How often a serving agent sends a status while a run is quiet; the idle limit's unit."""

MAX_REPLAY_BLOCKS = 200
"""The most blocks a request.read is answered with, whatever it asks for."""


ElicitRequest = (
    ElicitRequestApprove | ElicitRequestConfirm | ElicitRequestSelect | ElicitRequestInput
)
EventCallback = Callable[[EventMessage | UnknownEvent], None]
Terminal = TerminalResult | TerminalError
_Request = RequestPrompt | RequestResume | RequestAnswer | RequestRead
_Turn = TypeVar("_Turn", RequestPrompt, RequestResume, RequestAnswer)

_ELICIT_TIMEOUT = timedelta(seconds=10)
"""How long an answer, a waiting or a cancel waits for the worker to take it."""


def idle_limit(request_timeout: timedelta) -> timedelta:
    """How long the caller waits for the next message of a reply set."""
    return max(request_timeout, 3 * KEEPALIVE_INTERVAL)


@dataclass(frozen=True)
class TurnOptions:
    """How one turn is asked for and listened to; every field may be left as it is."""

    budget: Budget | None = None
    stream: bool = True
    deltas: bool = False
    """Ask for the pieces of each answer as it is written; they reach ``on_event`` as events
    ``fisk_ai.a2a.events.delta_from_message`` reads. A Go agent sends none."""
    force: bool = False
    """Continue a conversation whose agent changed since its last turn."""
    request: str | None = None
    """The turn's tag, minted when None; a caller that may cancel the turn picks it."""
    on_event: EventCallback | None = None
    prompter: Prompter | None = None
    """Who answers the run's questions; nobody (every question refused) when None."""
    on_ack: Callable[[Ack], None] | None = None
    """Gets the ack, which carries the conversation token for a later turn."""
    traceparent: str = ""
    """A remote caller's W3C ``traceparent`` the turn continues, instead of the trace current
    here; it goes out as it is when this process exports nothing."""


class PromptsClient:
    """Requests to agent ``identity`` on ``transport``, sent as ``sender``. ``request_timeout``
    bounds the wait for each next message of a reply set (see ``idle_limit``)."""

    def __init__(
        self,
        transport: Transport,
        identity: str,
        *,
        request_timeout: timedelta,
        sender: Identity = DEFAULT_CLIENT_IDENTITY,
    ) -> None:
        self._transport = transport
        self._identity = identity
        self._request_timeout = request_timeout
        self._sender = sender

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def sender(self) -> Identity:
        return self._sender

    async def ask(
        self,
        prompt: str,
        *,
        token: str | None = None,
        context: str = "",
        options: TurnOptions | None = None,
    ) -> Terminal:
        """Run ``prompt`` (the next turn of conversation ``token`` when given) and return the
        message ending its reply set."""
        options = options or TurnOptions()
        message = self._turn_request(
            RequestPrompt, options, prompt=prompt, context=context, conversation_token=token
        )
        return await self._exchange(message, options)

    async def resume(self, token: str, options: TurnOptions | None = None) -> Terminal:
        """Continue the run of conversation ``token`` where it stopped, with no new prompt.
        Returns the message ending the reply set."""
        options = options or TurnOptions()
        message = self._turn_request(RequestResume, options, conversation_token=token)
        return await self._exchange(message, options)

    async def answer(
        self, token: str, late: LateAnswer, options: TurnOptions | None = None
    ) -> Terminal:
        """Answer the call ``late`` names in conversation ``token`` after its run ended: a
        deferred call takes the answer as its result, an approval is answered when the run,
        resumed by this request, asks again. Returns the message ending the resumed run's
        reply set."""
        options = options or TurnOptions()
        message = self._turn_request(RequestAnswer, options, conversation_token=token, answer=late)
        return await self._exchange(message, options)

    async def read(
        self,
        token: str,
        *,
        replay: int,
        on_event: EventCallback | None = None,
        request: str | None = None,
    ) -> Terminal:
        """Read back the last ``replay`` blocks of conversation ``token``. The blocks, between
        the replay_start and replay_end statuses, go to ``on_event``."""
        message = new_request(
            RequestRead,
            sender=self._sender,
            recipient=Identity(name=self._identity),
            request=request or new_ksuid(),
            conversation_token=token,
            replay=replay,
        )
        return await self._exchange(message, TurnOptions(on_event=on_event))

    async def cancel(self, request: str, *, reason: str = "") -> bool:
        """Ask the agent to stop the turn of ``request`` at its next safe point; the turn then
        ends suspended on its own reply set. False when no worker holds that turn any more."""
        message = new_request(
            Cancel,
            traceparent=current_traceparent() or None,
            sender=self._sender,
            recipient=Identity(name=self._identity),
            request=request,
            reason=reason,
        )
        try:
            await self._transport.request(
                cancel_subject(self._identity, request), encode(message), timeout=_ELICIT_TIMEOUT
            )
        except A2AError:
            return False
        return True

    def _turn_request(self, kind: type[_Turn], options: TurnOptions, **fields: Any) -> _Turn:
        """A request for a turn of the agent, with what every turn carries from ``options``."""
        return new_request(
            kind,
            sender=self._sender,
            recipient=Identity(name=self._identity),
            request=options.request or new_ksuid(),
            budget=options.budget,
            stream=options.stream,
            deltas=options.deltas,
            force=options.force,
            **fields,
        )

    async def _exchange(self, message: _Request, options: TurnOptions) -> Terminal:
        """Send ``message`` on the agent's task subject and read its reply set to the end."""
        # The kind is the protocol id's last word: prompt, resume, answer, read.
        kind = message.protocol.rsplit(".", 1)[-1]
        with telemetry.current().remote_agent(
            self._identity, kind, traceparent=options.traceparent
        ):
            # Stamped inside the span, so the agent's run hangs off this call.
            stamp = current_traceparent() or options.traceparent or None
            traced = message.model_copy(update={"traceparent": stamp})
            return await self._exchange_traced(traced, options)

    async def _exchange_traced(self, message: _Request, options: TurnOptions) -> Terminal:
        transport = self._transport
        subject = task_subject(self._identity)
        arrived: asyncio.Queue[Delivery] = asyncio.Queue()

        async def keep(delivery: Delivery) -> None:
            arrived.put_nowait(delivery)

        # Subscribed before the request goes out, on the same connection, so nothing is missed.
        inbox = await transport.subscribe(transport.new_inbox(), keep)
        try:
            await transport.publish(subject, encode(message), reply=inbox.subject)
            expected = 1
            while True:
                reply = await self._next_reply(arrived, subject)
                if reply.request != message.request:
                    continue
                if reply.sequence != expected:
                    raise InvalidMessage(
                        f"agent {self._identity} sent message {reply.sequence} of request "
                        f"{message.request} where {expected} was due; the reply set has a gap"
                    )
                expected += 1
                if isinstance(reply, TerminalResult | TerminalError):
                    return reply
                await self._take(reply, options)
        finally:
            with contextlib.suppress(A2AError):
                await inbox.unsubscribe()

    async def _next_reply(self, arrived: asyncio.Queue[Delivery], subject: str) -> Message:
        limit = idle_limit(self._request_timeout).total_seconds()
        try:
            async with asyncio.timeout(limit):
                delivery = await arrived.get()
        except TimeoutError:
            raise RequestTimeout(
                f"remote agent unavailable: nothing came on the reply set of {subject} for "
                f"{limit:g}s; check that agent {self._identity} is running"
            ) from None
        failure = reply_failure(delivery, subject)
        if isinstance(failure, NoResponders):
            raise NoResponders(
                f"remote agent unavailable: nothing answers on {subject}; check that agent "
                f"{self._identity} is running and that its identity is spelled the same here"
            ) from None
        if failure is not None:
            raise failure
        return decode(delivery.data, direction=Direction.TO_CALLER)

    async def _take(self, reply: Message, options: TurnOptions) -> None:
        """Pass on a message of the reply set before its end."""
        match reply:
            case Ack():
                if options.on_ack is not None:
                    options.on_ack(reply)
            case (
                ElicitRequestApprove()
                | ElicitRequestConfirm()
                | ElicitRequestSelect()
                | ElicitRequestInput()
            ):
                await self._answer_question(reply, options.prompter or NoOperator())
            case _:
                if options.on_event is not None and isinstance(reply, EventMessage | UnknownEvent):
                    options.on_event(reply)

    async def _answer_question(self, request: ElicitRequest, prompter: Prompter) -> None:
        """Put the question to ``prompter`` and send its answer, holding the question open with
        a waiting every wait_ms / 3 meanwhile. A question the worker no longer holds (404) is
        dropped without an answer."""
        subject = elicit_subject(self._identity, request.request)
        holding: asyncio.Task[None] | None = None
        if request.wait_ms:
            holding = asyncio.get_running_loop().create_task(self._hold_open(subject, request))
        answer: Answer = None
        try:
            if prompter.can_prompt():
                answer = await prompter.ask(_question(request))
        except QuestionInterrupted:
            answer = None
        finally:
            if holding is not None:
                await cancel_and_wait(holding)
        reply = _reply(request, answer, self._sender)
        try:
            await self._transport.request(subject, encode(reply), timeout=_ELICIT_TIMEOUT)
        except A2AError:
            # A 404 means the worker gave the question up; either way the reply set says what
            # comes next.
            return

    async def _hold_open(self, subject: str, request: ElicitRequest) -> None:
        interval = (request.wait_ms or 0) / 3000
        while True:
            await asyncio.sleep(interval)
            waiting = ElicitWaiting(
                **reply_header(request, sender=self._sender), question_id=request.question_id
            )
            try:
                await self._transport.request(subject, encode(waiting), timeout=_ELICIT_TIMEOUT)
            except A2AError:
                return


def _question(request: ElicitRequest) -> Question:
    match request:
        case ElicitRequestApprove():
            return ApprovalQuestion(
                tool_use_id=request.tool_use_id or "",
                tool_name=request.command,
                command=request.command,
                display=request.display,
                trigger=request.tag,
                argv=request.argv,
            )
        case ElicitRequestConfirm():
            return ConfirmQuestion(request.question)
        case ElicitRequestSelect():
            return SelectQuestion(request.question, request.options)
        case ElicitRequestInput():
            return InputQuestion(request.question, request.default or "")


def _reply(request: ElicitRequest, answer: Answer, sender: Identity) -> Message:
    """The elicit reply giving ``answer`` to ``request``; an answer that does not fit the
    question (or none) says nobody was there to answer."""
    header = reply_header(request, sender=sender)
    question_id = request.question_id
    match request, answer:
        case ElicitRequestApprove(), ApprovalChoice():
            return ElicitReplyApprove(
                **header, question_id=question_id, choice=ElicitChoice(answer.value)
            )
        case ElicitRequestApprove(), DeclineWithReason():
            return ElicitReplyApprove(
                **header, question_id=question_id, choice=ElicitChoice.NO, reason=answer.sentence
            )
        case ElicitRequestConfirm(), bool():
            return ElicitReplyConfirm(**header, question_id=question_id, confirmed=answer)
        case ElicitRequestSelect(), int() if not isinstance(answer, bool):
            return ElicitReplySelect(**header, question_id=question_id, index=answer)
        case ElicitRequestInput(), str():
            return ElicitReplyInput(**header, question_id=question_id, value=answer)
        case _:
            return ElicitReplyNoOperator(**header, question_id=question_id)
