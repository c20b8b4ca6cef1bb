"""The a2a prompts channel: taking requests on ``task.<identity>`` and handing turns to a Server.

A caller sends a request.prompt on ``task.<identity>``. The channel opens the turn's cancel and
elicit subscriptions, acknowledges (sequence 1, with the conversation token), and hands the turn
to the Server as Work; the turn's events, questions and terminal message follow on the same
reply set. The channel admits no more turns than it has slots, so a turn it acknowledged always
finds one.

A message that cannot be read as a request (malformed, oversized, of another protocol) is answered
with the NATS service error headers and code 400. Anything refused after that is a negative ack
followed by a terminal error carrying a code, since an ack on its own closes nothing.

A cancel sets the turn's suspend event: the run parks at its next boundary and ends suspended.
It also gives up a question in flight. A request.resume continues a conversation's run where it
stopped, without a new prompt; a request.answer is checked, then resumes the run with the answer
in hand. `fisk serve` gives the Runner interactive settings, which is what leaves a completed turn
open for the next one (and its close journals the conversation as suspended between turns).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import A2AError, InvalidMessage
from fisk_ai.a2a.messages import (
    Ack,
    Cancel,
    ElicitReplyApprove,
    ElicitReplyConfirm,
    ElicitReplyInput,
    ElicitReplyNoOperator,
    ElicitReplySelect,
    ElicitWaiting,
    Header,
    Identity,
    Message,
    RequestAnswer,
    RequestPrompt,
    RequestRead,
    RequestResume,
    reply_header,
)
from fisk_ai.a2a.messages import Budget as WireBudget
from fisk_ai.a2a.outcome import terminal_message
from fisk_ai.a2a.transport import (
    Delivery,
    Subscription,
    Transport,
    cancel_subject,
    elicit_subject,
    task_subject,
)
from fisk_ai.a2a.vocabulary import Direction, ErrorCode
from fisk_ai.agent.outcome import RunResult
from fisk_ai.agent.replay import last_turn_over
from fisk_ai.agent.resources import Resources
from fisk_ai.serve.oplog import CHANNEL_PROMPTS as CHANNEL
from fisk_ai.serve.oplog import ending_fields, operator_log
from fisk_ai.serve.prompts.elicitation import (
    ElicitPrompter,
    LateAnswerPrompter,
    deferred_result,
    take_elicit_reply,
)
from fisk_ai.serve.prompts.options import PromptsOptions
from fisk_ai.serve.prompts.reading import check_answer, replay_conversation
from fisk_ai.serve.prompts.turn import Turn, Turnable, refuse, unsubscribe
from fisk_ai.serve.replies import ReplySet, answer_inbox, refuse_delivery
from fisk_ai.serve.server import DeferredAnswer, RequestedLimits, Work, WorkKind, lowered
from fisk_ai.sessions.errors import SessionError
from fisk_ai.sessions.fingerprint import RESUME_ADVICE, ResumeAdvice, conversation_allowance
from fisk_ai.sessions.fold import Conversation, fold
from fisk_ai.sessions.records import Record
from fisk_ai.tools.questions import NoOperator, Prompter

__all__ = ["PromptsChannel"]

_log = logging.getLogger(__name__)

_CALLER_RESUME_ADVICE = ResumeAdvice(
    changed="start a new conversation, or send the request with force: true",
    never="; start a new conversation",
)
"""What a caller whose conversation a configuration change stopped can do: the wire's
``force`` is a caller's --force."""


class PromptsChannel:
    """The a2a prompts channel of the agent ``options`` name: it takes request.prompt,
    request.resume and request.answer, refuses what it cannot take, and hands the rest to a
    Server as Work, at most ``options.workers`` at a time. request.read is answered here, since
    it runs no model.

    ``resources`` are the ones the Server's runs use: their settings tell a caller the limit
    its budget leaves, their store and tools answer reads and check late answers.
    """

    def __init__(self, transport: Transport, resources: Resources, options: PromptsOptions) -> None:
        if options.workers < 1:
            raise ValueError("workers must be at least 1")
        self._transport = transport
        self._resources = resources
        self._options = options
        self._identity = Identity(name=options.identity)
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
    def options(self) -> PromptsOptions:
        return self._options

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
            message = self._decode(delivery)
        except A2AError as error:
            await refuse_delivery(self._transport, delivery, error)
            return
        if isinstance(message, RequestRead):
            await self._read(message, self._replies(message, delivery.reply))
            return
        if not isinstance(message, Turnable):
            await refuse_delivery(
                self._transport,
                delivery,
                InvalidMessage(
                    f"{delivery.subject} takes request messages, not {message.protocol}"
                ),
            )
            return
        await self._accept(message, self._replies(message, delivery.reply))

    def _decode(self, delivery: Delivery) -> Message:
        return decode(
            delivery.data, direction=Direction.TO_AGENT, max_size=self._options.max_message_size
        )

    def _replies(self, request: Header, inbox: str) -> ReplySet:
        return ReplySet(
            self._transport,
            request,
            inbox,
            self._identity,
            max_size=self._options.max_message_size,
        )

    async def _read(self, request: RequestRead, replies: ReplySet) -> None:
        if self.draining:
            await refuse(
                replies,
                ErrorCode.DRAINING,
                f"agent {self.identity} is draining and takes no requests; retry",
            )
            return
        session_id = self._options.naming.session_id(self.identity, request.conversation_token)
        await replay_conversation(request, replies, session_id, self._resources)

    async def _accept(self, request: Turnable, replies: ReplySet) -> None:
        refusal = self._refusal_before_reading()
        if refusal is not None:
            await refuse(replies, *refusal)
            return
        follow_up = request.conversation_token is not None
        token = (
            request.conversation_token
            if request.conversation_token is not None
            else self._options.naming.new_token()
        )
        session_id = self._options.naming.session_id(self.identity, token)
        if session_id in self._in_flight:
            await refuse(
                replies,
                ErrorCode.CONVERSATION_BUSY,
                "a turn of this conversation is still running; wait for its terminal message",
            )
            return
        budget = _budget(request.budget)
        allowance = self._allowance(budget)
        records: tuple[Record, ...] = ()
        if follow_up:
            stored = await self._conversation_records(session_id)
            if stored is None:
                await refuse(
                    replies,
                    ErrorCode.UNKNOWN_CONVERSATION,
                    f"agent {self.identity} holds no conversation for that token; send the "
                    "prompt without conversation_token to start one",
                )
                return
            records = stored
            # Refused here rather than after an accepting ack: the turn would not run.
            if isinstance(request, RequestPrompt):
                conversation = fold(records)
                allowance = self._allowance(budget, conversation)
                not_taken = self._follow_up_refusal(conversation, allowance)
            else:
                not_taken = self._resume_refusal(request, records)
            if not_taken is not None:
                await refuse(replies, *not_taken)
                return

        deferred = False
        if isinstance(request, RequestAnswer):
            try:
                answer_refusal, deferred = await check_answer(
                    self._resources.store, request.answer, session_id
                )
            except SessionError as error:
                answer_refusal = (ErrorCode.FAILED, str(error))
            if answer_refusal is not None:
                await refuse(replies, *answer_refusal)
                return

        turn = Turn(request, replies, session_id)
        if not await self._open_subjects(turn):
            await refuse(
                replies,
                ErrorCode.FAILED,
                f"agent {self.identity} could not open the turn's subjects",
            )
            return

        self._hold(session_id)
        if not await replies.send(
            lambda header: Ack(
                **header, accepted=True, conversation_token=token, max_tokens=allowance
            )
        ):
            self._release(session_id)
            await unsubscribe(turn.subscriptions)
            return
        operator_log(
            "Accepted a prompt",
            channel=CHANNEL,
            request=request.request,
            caller=request.sender.name,
            session=session_id,
            prompt_bytes=_prompt_bytes(request),
        )
        work = self._work(turn, follow_up, budget, deferred, token)
        self._admitted.put_nowait(dataclasses.replace(work, records=records))

    @property
    def _serves_conversations(self) -> bool:
        """Whether callers hold this engine's conversations across deployments (see
        Work.conversation), rather than the terminal hosting the run for its operator."""
        return not self._options.naming.operator_is_caller

    def _allowance(
        self, budget: RequestedLimits | None, conversation: Conversation | None = None
    ) -> int:
        """The tokens a turn asking ``budget`` may bring its conversation to: the configured
        allowance lowered by the budget, and for a served ``conversation`` by the allowance it
        was started under too."""
        allowance = lowered(self._resources.settings, budget).max_tokens
        if conversation is not None and self._serves_conversations:
            return conversation_allowance(allowance, conversation.meta.fingerprint)
        return allowance

    def _refusal_before_reading(self) -> tuple[ErrorCode, str] | None:
        """Why no turn can be taken now, whatever it is for."""
        if self.draining:
            return (
                ErrorCode.DRAINING,
                f"agent {self.identity} is draining and takes no new prompts; retry",
            )
        # Admitted turns never outnumber the slots, so an admitted turn always finds one.
        if self._busy >= self._options.workers:
            return (
                ErrorCode.CAPACITY,
                f"agent {self.identity} is answering as many prompts as it may at once "
                f"({self._options.workers} at most); retry, and the next free member of its "
                "queue group takes it",
            )
        return None

    async def _open_subjects(self, turn: Turn) -> bool:
        """Subscribe the turn's cancel (and elicit) subjects; False, with nothing left open,
        when that fails. Opened before the ack: a cancel arriving early waits, one arriving at
        nobody is lost."""
        request = turn.request.request
        try:
            turn.subscriptions.append(
                await self._transport.subscribe(
                    cancel_subject(self.identity, request),
                    lambda delivery: self._on_cancel(turn, delivery),
                )
            )
            if self._options.elicit:
                turn.subscriptions.append(
                    await self._transport.subscribe(
                        elicit_subject(self.identity, request),
                        lambda delivery: self._on_elicit(turn, delivery),
                    )
                )
        except Exception:
            _log.exception("subscribing for request %s failed", request)
            await unsubscribe(turn.subscriptions)
            return False
        return True

    def _work(
        self,
        turn: Turn,
        follow_up: bool,
        budget: RequestedLimits | None,
        deferred: bool,
        token: str,
    ) -> Work:
        request = turn.request
        prompter: Prompter | None = None
        if self._options.elicit:
            prompter = ElicitPrompter(
                turn,
                self._options.request_timeout,
                lambda: self.draining,
                operator_is_caller=self._options.naming.operator_is_caller,
            )
        kind = WorkKind.RESUME
        prompt = ""
        answered: DeferredAnswer | None = None
        if isinstance(request, RequestAnswer):
            late = request.answer
            # A deferred call takes the answer as its result, so the resumed run does not ask.
            prompter = LateAnswerPrompter(late, prompter or NoOperator(), spent=deferred)
            if deferred:
                answered = DeferredAnswer(late.tool_use_id, deferred_result(late))
        elif isinstance(request, RequestPrompt):
            kind = WorkKind.FOLLOW_UP if follow_up else WorkKind.START
            prompt = _prompt_text(request)

        async def done(result: RunResult) -> None:
            await self._finish(turn, result)

        served = self._serves_conversations
        return Work(
            kind=kind,
            session_id=turn.session_id,
            done=done,
            events=turn.sink,
            prompt=prompt,
            force=request.force,
            budget=budget,
            prompter=prompter,
            suspend=turn.suspend,
            run_context=lambda: self._begin(turn, resumed=kind is not WorkKind.START),
            deferred_answer=answered,
            conversation_token=token,
            caller=request.sender.name,
            traceparent=request.traceparent or "",
            trace=turn.trace,
            # A served conversation outlives deployments; a terminal's own run is resumed as
            # the command line resumes one, by its operator, who has --force.
            conversation=served,
            resume_advice=_CALLER_RESUME_ADVICE if served else RESUME_ADVICE,
        )

    def _begin(self, turn: Turn, *, resumed: bool) -> None:
        """The Server started the turn: say so, and let its events and keepalives go."""
        operator_log(
            "Running",
            channel=CHANNEL,
            work=turn.session_id,
            caller=turn.request.sender.name,
            caller_verified=False,
            resume=turn.session_id if resumed else None,
        )
        turn.begin(self._options.keepalive_interval)

    def _hold(self, session_id: str) -> None:
        self._busy += 1
        self._idle.clear()
        self._in_flight.add(session_id)

    def _release(self, session_id: str) -> None:
        self._busy -= 1
        self._in_flight.discard(session_id)
        if not self._busy:
            self._idle.set()

    async def _finish(self, turn: Turn, result: RunResult) -> None:
        """The turn is over, whether it ran, crashed, or was given up: the events it emitted go
        out, the conversation is free for its next turn, then the terminal message goes."""
        await turn.stop_publishing()
        self._release(turn.session_id)
        await turn.send_terminal(result)
        ending = terminal_message(
            result, reply_header(turn.request, sender=self._identity), identity=self.identity
        )
        operator_log(
            "Ending a run",
            channel=CHANNEL,
            request=turn.request.request,
            caller=turn.request.sender.name,
            session=turn.session_id,
            **ending_fields(ending),
        )

    async def _conversation_records(self, session_id: str) -> tuple[Record, ...] | None:
        """The journal of ``session_id``, read once for the checks before the ack and the
        turn; None when no conversation is stored under it or it cannot be read."""
        try:
            if not await self._resources.store.exists(session_id):
                return None
            return tuple(await self._resources.store.read(session_id))
        except SessionError:
            return None

    def _resume_refusal(
        self, request: Turnable, records: Sequence[Record]
    ) -> tuple[ErrorCode, str] | None:
        """Why a plain resume of the conversation journaled as ``records`` would run nothing:
        its last turn is over. A terminal's own run is resumed to be shown and take its next
        prompt, whatever its last turn left, so only a served conversation is refused."""
        if not isinstance(request, RequestResume) or not self._serves_conversations:
            return None
        try:
            over = last_turn_over(fold(records))
        except SessionError:
            return None  # The resume itself says what is wrong with the journal.
        if not over:
            return None
        return (
            ErrorCode.NOT_STARTED,
            "the conversation's last turn is over, so a resume has nothing to carry on; send "
            "the next prompt with its conversation_token, or read it back with request.read",
        )

    def _follow_up_refusal(
        self, conversation: Conversation, allowance: int
    ) -> tuple[ErrorCode, str] | None:
        """Why a follow-up prompt to ``conversation`` would not run: it waits on a deferred
        call, or it has already processed the tokens it is allowed on this request."""
        if conversation.deferred:
            return (
                ErrorCode.TURN_NOT_TAKEN,
                "the conversation is waiting on a deferred tool result; answer it with "
                "request.answer before sending another turn",
            )
        processed = conversation.usage.processed
        if processed >= allowance:
            return (
                ErrorCode.BUDGET_EXHAUSTED,
                f"the conversation has processed {processed} tokens, reaching the "
                f"{allowance}-token allowance of this request; send the prompt without "
                "conversation_token to start a new conversation",
            )
        return None

    async def _on_cancel(self, turn: Turn, delivery: Delivery) -> None:
        try:
            message = self._decode(delivery)
            if not isinstance(message, Cancel):
                raise InvalidMessage(f"{delivery.subject} takes cancel messages only")
        except A2AError as error:
            await refuse_delivery(self._transport, delivery, error)
            return
        turn.suspend.set()
        await self._acknowledge(message, delivery)

    async def _on_elicit(self, turn: Turn, delivery: Delivery) -> None:
        try:
            message = self._decode(delivery)
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
            take_elicit_reply(turn, message, draining=self.draining)
        except A2AError as error:
            await refuse_delivery(self._transport, delivery, error)
            return
        await self._acknowledge(message, delivery)

    async def _acknowledge(self, message: Header, delivery: Delivery) -> None:
        if not delivery.reply:
            return
        ack = Ack(**reply_header(message, sender=self._identity), accepted=True)
        await answer_inbox(
            self._transport, delivery.reply, encode(ack, max_size=self._options.max_message_size)
        )


def _budget(budget: WireBudget | None) -> RequestedLimits | None:
    if budget is None:
        return None
    return RequestedLimits(
        max_tokens=budget.max_tokens or 0, max_iterations=budget.max_iterations or 0
    )


def _prompt_bytes(request: Turnable) -> int | None:
    """The size of a prompt's text; None for a request carrying none."""
    if isinstance(request, RequestPrompt):
        return len(request.prompt.encode())
    return None


def _prompt_text(request: RequestPrompt) -> str:
    return f"{request.prompt}\n\n{request.context}" if request.context else request.prompt
