"""Sending a prompt to another agent and reading its reply set.

``ask`` sends a request.prompt on the agent's task subject and reads the reply set in sequence
order: the ack, the events (passed to ``on_event``), the questions (answered through the given
prompter, holding each open with elicit.waiting every wait_ms / 3 while a person thinks), and the
terminal result or error, which it returns. A refused prompt is a terminal error like any other,
not an exception; a peer that does not answer at all, or a reply set with a hole in it, raises.

The idle limit applies to the gap between two messages rather than to the whole turn, since a run
may think for a long time without being stuck. It is floored at three keepalive intervals, and it
does not run while one of our questions is in front of a person.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any, cast

from fisk_ai.a2a.client import DEFAULT_CLIENT_IDENTITY
from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import (
    A2AError,
    InvalidMessage,
    NoResponders,
    RequestTimeout,
)
from fisk_ai.a2a.messages import (
    EVENT_PROTOCOL_PREFIX,
    Ack,
    Budget,
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
    EventMessage,
    Header,
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
    reply_to,
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
    SelectQuestion,
)
from fisk_ai.util.ids import new_ksuid

__all__ = [
    "KEEPALIVE_INTERVAL",
    "MAX_REPLAY_BLOCKS",
    "ElicitRequest",
    "EventCallback",
    "answer",
    "ask",
    "cancel",
    "idle_limit",
    "read",
    "resume",
]

KEEPALIVE_INTERVAL = timedelta(seconds=10)
"""How often a serving agent sends a status while a run is quiet; the idle limit's unit."""

MAX_REPLAY_BLOCKS = 200
"""The most blocks a request.read is answered with, whatever it asks for."""

ElicitRequest = (
    ElicitRequestApprove | ElicitRequestConfirm | ElicitRequestSelect | ElicitRequestInput
)
EventCallback = Callable[[EventMessage | UnknownEvent], None]

_ELICIT_TIMEOUT = timedelta(seconds=10)
"""How long an answer, a waiting or a cancel waits for the worker to take it."""


def idle_limit(request_timeout: timedelta) -> timedelta:
    """How long the caller waits for the next message of a reply set."""
    return max(request_timeout, 3 * KEEPALIVE_INTERVAL)


async def ask(
    transport: Transport,
    identity: str,
    prompt: str,
    *,
    request_timeout: timedelta,
    token: str | None = None,
    context: str = "",
    budget: Budget | None = None,
    stream: bool = True,
    on_event: EventCallback | None = None,
    prompter: Prompter | None = None,
    sender: Identity = DEFAULT_CLIENT_IDENTITY,
    request: str | None = None,
    on_ack: Callable[[Ack], None] | None = None,
    force: bool = False,
) -> TerminalResult | TerminalError:
    """Run ``prompt`` on agent ``identity`` (the next turn of conversation ``token`` when given)
    and return the message ending its reply set. ``request`` is the turn's tag, minted here
    when not given; the ack, with the conversation token for a later turn, goes to ``on_ack``.
    ``force`` continues a conversation whose agent changed since its last turn."""
    message = new_request(
        RequestPrompt,
        sender=sender,
        recipient=Identity(name=identity),
        request=request or new_ksuid(),
        prompt=prompt,
        context=context,
        budget=budget,
        stream=stream,
        conversation_token=token,
        force=force,
    )
    return await _exchange(
        transport,
        identity,
        message,
        request_timeout=request_timeout,
        on_event=on_event,
        prompter=prompter,
        sender=sender,
        on_ack=on_ack,
    )


async def resume(
    transport: Transport,
    identity: str,
    token: str,
    *,
    request_timeout: timedelta,
    force: bool = False,
    budget: Budget | None = None,
    stream: bool = True,
    on_event: EventCallback | None = None,
    prompter: Prompter | None = None,
    sender: Identity = DEFAULT_CLIENT_IDENTITY,
    request: str | None = None,
    on_ack: Callable[[Ack], None] | None = None,
) -> TerminalResult | TerminalError:
    """Continue the run of conversation ``token`` on agent ``identity`` where it stopped, with no
    new prompt; ``force`` continues although the agent changed. Returns the message ending the
    reply set."""
    message = new_request(
        RequestResume,
        sender=sender,
        recipient=Identity(name=identity),
        request=request or new_ksuid(),
        conversation_token=token,
        budget=budget,
        stream=stream,
        force=force,
    )
    return await _exchange(
        transport,
        identity,
        message,
        request_timeout=request_timeout,
        on_event=on_event,
        prompter=prompter,
        sender=sender,
        on_ack=on_ack,
    )


async def cancel(
    transport: Transport,
    identity: str,
    request: str,
    *,
    reason: str = "",
    sender: Identity = DEFAULT_CLIENT_IDENTITY,
) -> bool:
    """Ask agent ``identity`` to stop the turn of ``request`` at its next safe point; the turn
    then ends suspended on its own reply set. False when no worker holds that turn any more."""
    message = new_request(
        Cancel,
        sender=sender,
        recipient=Identity(name=identity),
        request=request,
        reason=reason,
    )
    try:
        await transport.request(
            cancel_subject(identity, request),
            encode(cast(Message, message)),
            timeout=_ELICIT_TIMEOUT,
        )
    except A2AError:
        return False
    return True


async def read(
    transport: Transport,
    identity: str,
    token: str,
    *,
    replay: int,
    request_timeout: timedelta,
    on_event: EventCallback | None = None,
    sender: Identity = DEFAULT_CLIENT_IDENTITY,
    request: str | None = None,
) -> TerminalResult | TerminalError:
    """Read back the last ``replay`` blocks of conversation ``token`` on agent ``identity``.
    The blocks, between the replay_start and replay_end statuses, go to ``on_event``."""
    message = new_request(
        RequestRead,
        sender=sender,
        recipient=Identity(name=identity),
        request=request or new_ksuid(),
        conversation_token=token,
        replay=replay,
    )
    return await _exchange(
        transport, identity, message, request_timeout=request_timeout, on_event=on_event
    )


async def answer(
    transport: Transport,
    identity: str,
    token: str,
    late: LateAnswer,
    *,
    request_timeout: timedelta,
    budget: Budget | None = None,
    stream: bool = True,
    on_event: EventCallback | None = None,
    prompter: Prompter | None = None,
    sender: Identity = DEFAULT_CLIENT_IDENTITY,
    request: str | None = None,
) -> TerminalResult | TerminalError:
    """Answer the call ``late`` names in conversation ``token`` after its run ended: a deferred
    call takes the answer as its result, an approval is answered when the run, resumed by this
    request, asks again. Returns the message ending the resumed run's reply set."""
    message = new_request(
        RequestAnswer,
        sender=sender,
        recipient=Identity(name=identity),
        request=request or new_ksuid(),
        conversation_token=token,
        answer=late,
        budget=budget,
        stream=stream,
    )
    return await _exchange(
        transport,
        identity,
        message,
        request_timeout=request_timeout,
        on_event=on_event,
        prompter=prompter,
        sender=sender,
    )


async def _exchange(
    transport: Transport,
    identity: str,
    message: Header,
    *,
    request_timeout: timedelta,
    on_event: EventCallback | None = None,
    prompter: Prompter | None = None,
    sender: Identity = DEFAULT_CLIENT_IDENTITY,
    on_ack: Callable[[Ack], None] | None = None,
) -> TerminalResult | TerminalError:
    """Send ``message`` on the agent's task subject and read its reply set to the end."""
    subject = task_subject(identity)
    arrived: asyncio.Queue[Delivery] = asyncio.Queue()

    async def keep(delivery: Delivery) -> None:
        arrived.put_nowait(delivery)

    limit = idle_limit(request_timeout).total_seconds()
    answering = prompter or NoOperator()
    # Subscribed before the request goes out, on the same connection, so nothing is missed.
    inbox = await transport.subscribe(transport.new_inbox(), keep)
    try:
        await transport.publish(subject, encode(cast(Message, message)), reply=inbox.subject)
        expected = 1
        while True:
            try:
                async with asyncio.timeout(limit):
                    delivery = await arrived.get()
            except TimeoutError:
                raise RequestTimeout(
                    f"remote agent unavailable: nothing came on the reply set of {subject} for "
                    f"{limit:g}s; check that agent {identity} is running"
                ) from None
            failure = reply_failure(delivery, subject)
            if isinstance(failure, NoResponders):
                raise NoResponders(
                    f"remote agent unavailable: nothing answers on {subject}; check that agent "
                    f"{identity} is running and that its identity is spelled the same here"
                ) from None
            if failure is not None:
                raise failure
            reply = decode(delivery.data, direction=Direction.TO_CALLER)
            if reply.request != message.request:
                continue
            if reply.sequence != expected:
                raise InvalidMessage(
                    f"agent {identity} sent message {reply.sequence} of request "
                    f"{message.request} where {expected} was due; the reply set has a gap"
                )
            expected += 1
            match reply:
                case TerminalResult() | TerminalError():
                    return reply
                case Ack():
                    if on_ack is not None:
                        on_ack(reply)
                case (
                    ElicitRequestApprove()
                    | ElicitRequestConfirm()
                    | ElicitRequestSelect()
                    | ElicitRequestInput()
                ):
                    await _answer(transport, identity, reply, answering, sender)
                case UnknownEvent():
                    if on_event is not None:
                        on_event(reply)
                case _:
                    if on_event is not None and _is_event(reply):
                        on_event(cast(EventMessage, reply))
    finally:
        with contextlib.suppress(A2AError):
            await inbox.unsubscribe()


def _is_event(message: Message) -> bool:
    return message.protocol.startswith(EVENT_PROTOCOL_PREFIX)


def _question(request: ElicitRequest) -> Question:
    match request:
        case ElicitRequestApprove():
            return ApprovalQuestion(
                tool_use_id=request.tool_use_id or "",
                tool_name=request.command,
                command=request.command,
                display=request.display,
                trigger=request.tag,
            )
        case ElicitRequestConfirm():
            return ConfirmQuestion(request.question)
        case ElicitRequestSelect():
            return SelectQuestion(request.question, request.options)
        case ElicitRequestInput():
            return InputQuestion(request.question, request.default or "")


def _reply(request: ElicitRequest, answer: Answer, sender: Identity) -> Message:
    common: dict[str, Any] = {"sender": sender, "question_id": request.question_id}
    reply: Header
    match request, answer:
        case ElicitRequestApprove(), ApprovalChoice():
            reply = reply_to(
                request, ElicitReplyApprove, choice=ElicitChoice(answer.value), **common
            )
        case ElicitRequestConfirm(), bool():
            reply = reply_to(request, ElicitReplyConfirm, confirmed=answer, **common)
        case ElicitRequestSelect(), int() if not isinstance(answer, bool):
            reply = reply_to(request, ElicitReplySelect, index=answer, **common)
        case ElicitRequestInput(), str():
            reply = reply_to(request, ElicitReplyInput, value=answer, **common)
        case _:
            reply = reply_to(request, ElicitReplyNoOperator, **common)
    return cast(Message, reply)


async def _answer(
    transport: Transport,
    identity: str,
    request: ElicitRequest,
    prompter: Prompter,
    sender: Identity,
) -> None:
    """Put the question to ``prompter`` and send its answer, holding the question open with a
    waiting every wait_ms / 3 meanwhile. A question the worker no longer holds (404) is
    dropped without an answer."""
    subject = elicit_subject(identity, request.request)
    holding: asyncio.Task[None] | None = None
    if request.wait_ms:
        holding = asyncio.get_running_loop().create_task(
            _hold_open(transport, subject, request, sender)
        )
    answer: Answer = None
    try:
        if prompter.can_prompt():
            answer = await prompter.ask(_question(request))
    except QuestionInterrupted:
        answer = None
    finally:
        if holding is not None:
            holding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await holding
    reply = _reply(request, answer, sender)
    try:
        await transport.request(subject, encode(reply), timeout=_ELICIT_TIMEOUT)
    except A2AError:
        # A 404 means the worker gave the question up; either way the reply set says what next.
        return


async def _hold_open(
    transport: Transport, subject: str, request: ElicitRequest, sender: Identity
) -> None:
    interval = (request.wait_ms or 0) / 3000
    while True:
        await asyncio.sleep(interval)
        waiting = cast(
            Message,
            reply_to(request, ElicitWaiting, sender=sender, question_id=request.question_id),
        )
        try:
            await transport.request(subject, encode(waiting), timeout=_ELICIT_TIMEOUT)
        except A2AError:
            return
