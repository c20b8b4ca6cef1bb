"""Questions over a2a: putting a run's questions to its caller, and taking their answers.

A question goes out on the turn's reply set and its answer comes back on the turn's elicit
subject. Each elicit.waiting restarts the question's window; silence until the window closes, or
a cancel, gives the question up, which ends the run suspended (it is asked again when the
conversation continues).

A request.answer supplies, after the run ended, the answer to a question it stopped on. A
deferred call takes the answer as its result; any other call named is answered from the request
when the resumed run asks again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from fisk_ai.a2a.errors import A2AError, InvalidMessage
from fisk_ai.a2a.messages import Answer as LateAnswer
from fisk_ai.a2a.messages import (
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
    Message,
    ReplyHeader,
)
from fisk_ai.a2a.vocabulary import AnswerField, AnswerKind, ElicitChoice
from fisk_ai.serve.oplog import CHANNEL_PROMPTS, operator_log
from fisk_ai.serve.prompts.turn import PendingQuestion, Turn
from fisk_ai.serve.replies import Reply
from fisk_ai.tools.questions import (
    Answer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    DeclineWithReason,
    InputQuestion,
    NobodyToAsk,
    NoOperator,
    Prompter,
    Question,
    QuestionInterrupted,
    QuestionUnanswered,
    SelectQuestion,
)
from fisk_ai.util.durations import format_duration
from fisk_ai.util.ids import new_ksuid

__all__ = [
    "NOT_FOUND",
    "ElicitPrompter",
    "ElicitReply",
    "LateAnswerPrompter",
    "deferred_result",
    "take_elicit_reply",
]

NOT_FOUND = 404

ElicitReply = (
    ElicitReplyApprove
    | ElicitReplyConfirm
    | ElicitReplySelect
    | ElicitReplyInput
    | ElicitReplyNoOperator
)

_NOBODY_ANSWERED = "nobody was there to answer"
_NOBODY_AT_THE_CALLER = NobodyToAsk("the caller has no operator to ask")


class _Gone(A2AError):
    """An answer to a question nobody is waiting on any more."""

    default_service_code = NOT_FOUND


class ElicitPrompter:
    """Puts the run's questions to the caller of ``turn``, holding each for ``window``.
    ``draining`` says whether the engine is draining, which stops windows restarting. With
    ``operator_is_caller`` the caller is the terminal hosting the run, so a question given up
    is said to be given up by its operator."""

    def __init__(
        self,
        turn: Turn,
        window: timedelta,
        draining: Callable[[], bool],
        *,
        operator_is_caller: bool = False,
    ) -> None:
        self._turn = turn
        self._window = window
        self._draining = draining
        self._caller = "the operator" if operator_is_caller else "the caller"
        if operator_is_caller:
            self._canceled = "the operator interrupted a question, which is not an answer"
        else:
            self._canceled = (
                "the caller canceled the request while a question was open, which is not an answer"
            )

    def can_prompt(self) -> bool:
        # A canceled turn still asks, so the question is given up (and the run parks) rather
        # than answered as a refusal nobody gave.
        return True

    async def ask(self, question: Question) -> Answer:
        turn = self._turn
        if turn.suspend.is_set():
            raise QuestionInterrupted(self._canceled)
        # The question goes after the events that led to it.
        await turn.flush()
        question_id = new_ksuid()
        wait_ms = int(self._window.total_seconds() * 1000)
        loop = asyncio.get_running_loop()
        pending = PendingQuestion(question, loop.create_future())
        turn.questions[question_id] = pending
        turn.held += 1
        asked = loop.time()
        fields: dict[str, object] = {
            "channel": CHANNEL_PROMPTS,
            "request": turn.request.request,
            "caller": turn.request.sender.name,
            "question": question_id,
        }
        outcome = f"the question could not be sent to {self._caller}"
        try:
            if not await turn.replies.send(_elicit_request(question, question_id, wait_ms)):
                raise QuestionInterrupted(outcome)
            operator_log(
                "Asked the caller a question", **fields, kind=_kind(question), wait_ms=wait_ms
            )
            outcome = "the run stopped waiting"
            answer = await self._wait(pending)
            outcome = ""
            return answer
        except (QuestionInterrupted, QuestionUnanswered) as error:
            outcome = str(error)
            raise
        finally:
            turn.held -= 1
            turn.questions.pop(question_id, None)
            held = format_duration(timedelta(seconds=round(loop.time() - asked)))
            if not outcome:
                operator_log("A question was answered", **fields, held=held, acks=pending.waits)
            else:
                operator_log(
                    "A question was given up",
                    **fields,
                    held=held,
                    acks=pending.waits,
                    reason=outcome,
                )

    async def _wait(self, pending: PendingQuestion) -> Answer:
        loop = asyncio.get_running_loop()
        stop = loop.create_task(self._turn.suspend.wait())
        try:
            while True:
                pending.waiting.clear()
                restart = loop.create_task(pending.waiting.wait())
                watched: set[asyncio.Future[Any]] = {pending.answered, restart, stop}
                done, _ = await asyncio.wait(
                    watched,
                    timeout=self._window.total_seconds(),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                restart.cancel()
                # A cancel heard with an answer wins: the surface that stopped the run sends the
                # cancel before it gives its question up, and giving up is not an answer.
                if stop in done:
                    raise QuestionInterrupted(self._canceled)
                if pending.answered in done:
                    return pending.answered.result()
                if self._draining():
                    raise QuestionInterrupted(
                        "the agent is draining and stopped waiting for an answer"
                    )
                if restart not in done:
                    raise QuestionUnanswered(f"{self._caller} did not answer a question in time")
        finally:
            stop.cancel()


def _kind(question: Question) -> str:
    """The question's kind as its elicit request names it."""
    match question:
        case ApprovalQuestion():
            return "approve"
        case ConfirmQuestion():
            return "confirm"
        case SelectQuestion():
            return "select"
        case InputQuestion():
            return "input"


def _elicit_request(question: Question, question_id: str, wait_ms: int) -> Reply:
    """The elicit request putting ``question`` to the caller."""

    def build(header: ReplyHeader) -> Message:
        match question:
            case ApprovalQuestion():
                return ElicitRequestApprove(
                    **header,
                    question_id=question_id,
                    wait_ms=wait_ms,
                    tool_use_id=question.tool_use_id,
                    command=question.command,
                    display=question.display,
                    tag=question.trigger,
                    argv=question.argv,
                )
            case ConfirmQuestion():
                return ElicitRequestConfirm(
                    **header, question_id=question_id, wait_ms=wait_ms, question=question.question
                )
            case SelectQuestion():
                return ElicitRequestSelect(
                    **header,
                    question_id=question_id,
                    wait_ms=wait_ms,
                    question=question.question,
                    options=question.options,
                )
            case InputQuestion():
                return ElicitRequestInput(
                    **header,
                    question_id=question_id,
                    wait_ms=wait_ms,
                    question=question.question,
                    default=question.default or None,
                )

    return build


def take_elicit_reply(turn: Turn, message: ElicitReply | ElicitWaiting, *, draining: bool) -> None:
    """Hand a reply from the turn's elicit subject to the question it answers; a waiting
    restarts the question's window unless the engine is draining. Raises an A2AError (404 for
    a question nobody waits on) for the sender to be told."""
    pending = turn.questions.get(message.question_id)
    if pending is None or pending.answered.done():
        raise _Gone(f"question {message.question_id} is not waiting for an answer")
    if isinstance(message, ElicitWaiting):
        pending.waits += 1
        if not draining:
            pending.waiting.set()
        return
    pending.answered.set_result(_answer_for(pending.kind, message))


def _answer_for(question: Question, reply: ElicitReply) -> Answer:
    """The Prompter answer a reply carries; raises InvalidMessage when it answers another kind
    of question than the one asked."""
    match question, reply:
        case ApprovalQuestion(), ElicitReplyNoOperator():
            return _NOBODY_AT_THE_CALLER
        case _, ElicitReplyNoOperator():
            return None
        case ApprovalQuestion(), ElicitReplyApprove():
            if reply.choice is ElicitChoice.NO and reply.reason.strip():
                return DeclineWithReason(reply.reason)
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


class LateAnswerPrompter:
    """Answers, from a request.answer, the question the resumed run asks again for the call it
    names; every other question goes to ``fallback``. An approval is matched by its call id;
    the human-in-the-loop questions carry none, so the first one of the answer's kind is taken,
    which the check before the ack made the named call's. ``spent`` from the start leaves every
    question to ``fallback``."""

    def __init__(
        self, answer: LateAnswer, fallback: Prompter, *, spent: bool = False, reason: str = ""
    ) -> None:
        self._answer = answer
        self._fallback = fallback
        self.spent = spent
        self._reason = reason

    def can_prompt(self) -> bool:
        return not self.spent or self._fallback.can_prompt()

    async def ask(self, question: Question) -> Answer:
        if not self.spent and self._matches(question):
            self.spent = True
            return _late_answer_for(question, self._answer, self._reason)
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


def _late_answer_for(question: Question, late: LateAnswer, reason: str = "") -> Answer:
    """The Prompter answer a late answer gives ``question``. A selection names its option, so
    one naming no option offered is no selection; a declined approval carries ``reason`` to
    the model when one was given."""
    if late.answer is AnswerField.NO_OPERATOR:
        return _NOBODY_AT_THE_CALLER if isinstance(question, ApprovalQuestion) else None
    match question:
        case ApprovalQuestion() if reason.strip() and late.choice in (None, ElicitChoice.NO):
            return DeclineWithReason(reason)
        case ApprovalQuestion():
            return ApprovalChoice((late.choice or ElicitChoice.NO).value)
        case ConfirmQuestion():
            return bool(late.confirmed)
        case SelectQuestion():
            options = list(question.options)
            return options.index(late.value) if late.value in options else None
        case InputQuestion():
            return late.value or ""


def deferred_result(late: LateAnswer) -> str:
    """A deferred call's result as a late answer gives it, shaped as the human-in-the-loop
    tools shape theirs so the model reads one format."""
    nobody = late.answer is AnswerField.NO_OPERATOR
    result: dict[str, str | bool | None]
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
