"""The questions a Slack turn's run waits on, from the message posted to the answer or the
giving up.

The run waits ``answer_grace`` for a press and then lets go of the thread (the question tool
defers its call, the gate stops the run). A press arriving later answers the question late: its
message records the answer, and the status of the turn that asked says the thread carried on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fisk_ai.serve.oplog import operator_log
from fisk_ai.serve.slack.options import CHANNEL_SLACK, SlackOptions, Thread
from fisk_ai.serve.slack.questions import (
    Pressed,
    answered_blocks,
    live_answer,
    question_blocks,
    question_kind,
    reason_blocks,
)
from fisk_ai.serve.slack.status import StatusPresenter
from fisk_ai.serve.slack.text import Phase
from fisk_ai.serve.slack.turns import Turn
from fisk_ai.serve.slack.web import HISTORY_PAGE, SlackWeb
from fisk_ai.tools.questions import (
    Answer,
    Prompter,
    Question,
    QuestionInterrupted,
    QuestionUnanswered,
)
from fisk_ai.util.durations import format_duration
from fisk_ai.util.ids import new_ksuid

__all__ = ["OpenQuestion", "OpenQuestions"]


@dataclass(eq=False)
class OpenQuestion:
    """A question posted as the message ``message_ts``, whose run waits on ``answered``."""

    turn: Turn
    question: Question
    text: str
    message_ts: str
    answered: asyncio.Future[Answer]


class OpenQuestions:
    """The questions of a channel's turns, posted through ``web``; ``status`` shows a turn
    waiting on one. ``in_background`` runs what the caller must not wait on."""

    def __init__(
        self,
        web: SlackWeb,
        status: StatusPresenter,
        options: SlackOptions,
        in_background: Callable[[Awaitable[None]], None],
    ) -> None:
        self._web = web
        self._status = status
        self._options = options
        self._in_background = in_background
        self._open: dict[str, OpenQuestion] = {}

    def prompter(self, turn: Turn) -> Prompter:
        """The prompter that puts ``turn``'s questions to its thread."""
        return _ThreadPrompter(self, turn)

    def get(self, question_id: str) -> OpenQuestion | None:
        return self._open.get(question_id)

    def in_thread(self, thread: Thread) -> OpenQuestion | None:
        """The question a run in ``thread`` waits on, if one does."""
        return next((q for q in self._open.values() if q.turn.thread == thread), None)

    async def ask(self, turn: Turn, question: Question) -> Answer:
        """Post ``question`` in ``turn``'s thread and wait ``answer_grace`` for its answer."""
        work = turn.work
        if work is None or work.suspend.is_set():
            raise QuestionInterrupted("the turn was stopped")
        await self._status.caught_up(turn)
        question_id = new_ksuid()
        text, blocks = question_blocks(question, question_id, turn.starter)
        posted = await self._web.call(
            "chat_postMessage",
            channel=turn.thread.channel,
            thread_ts=turn.thread.ts,
            text=text,
            blocks=blocks,
        )
        if not posted:
            raise QuestionInterrupted("the question could not be posted")
        loop = asyncio.get_running_loop()
        asked = OpenQuestion(turn, question, text, str(posted.get("ts", "")), loop.create_future())
        self._open[question_id] = asked
        self._status.show(turn, Phase.WAITING)
        asked_at = loop.time()
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
            watched: set[asyncio.Future[Any]] = {asked.answered, stop}
            done, _ = await asyncio.wait(
                watched, timeout=grace, return_when=asyncio.FIRST_COMPLETED
            )
            if asked.answered in done:
                answer = asked.answered.result()
                self._status.show(turn, Phase.THINKING)
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
            self._open.pop(question_id, None)
            held = format_duration(timedelta(seconds=round(loop.time() - asked_at)))
            if not outcome:
                operator_log("A question was answered", **fields, held=held, acks=0)
            else:
                operator_log("A question was given up", **fields, held=held, reason=outcome)

    async def deliver(self, asked: OpenQuestion, pressed: Pressed, who: str) -> None:
        """``who`` answered the question its run still waits on."""
        # Delivery and giving up are one step on this loop: the waiting side removes the
        # question before it stops waiting, so a press is one or the other, never both.
        if asked.answered.done():
            return
        asked.answered.set_result(live_answer(asked.question, pressed))
        await self._mark_answered(
            asked.turn.thread.channel, asked.message_ts, asked.text, who, pressed
        )

    async def answered_late(
        self, thread: Thread, message_ts: str, who: str, pressed: Pressed, payload: dict[str, Any]
    ) -> None:
        """``who`` answered the question ``message_ts`` after its run let go of it."""
        text = str((payload.get("message") or {}).get("text", ""))
        await self._mark_answered(thread.channel, message_ts, text, who, pressed)
        self._in_background(self._retire_waiting_status(thread, message_ts))

    async def _mark_answered(
        self, channel: str, message_ts: str, text: str, who: str, pressed: Pressed
    ) -> None:
        await self._web.call(
            "chat_update",
            channel=channel,
            ts=message_ts,
            text=f"{text} (answered by {who})",
            blocks=answered_blocks(text, who, pressed),
        )

    async def open_reason(
        self, channel: str, message_ts: str, pressed: Pressed, payload: dict[str, Any]
    ) -> None:
        """Open the approval's field for the reason of a decline; the question stays open."""
        asked = self._open.get(pressed.question_id)
        text = (
            asked.text if asked is not None else str((payload.get("message") or {}).get("text", ""))
        )
        await self._web.call(
            "chat_update",
            channel=channel,
            ts=message_ts,
            text=text,
            blocks=reason_blocks(text, pressed),
        )

    def interrupt(self, turn: Turn) -> None:
        """Somebody pressed Stop on ``turn``: its run stops waiting on its questions."""
        for asked in list(self._open.values()):
            if asked.turn is turn and not asked.answered.done():
                asked.answered.set_exception(QuestionInterrupted("somebody pressed Stop"))

    async def _retire_waiting_status(self, thread: Thread, question_ts: str) -> None:
        """The status message of the turn that asked the question, which still says it waits
        for the answer now given, says the thread carried on; the worker that posted it may
        be gone, so it is found in the thread: the bot's last message before the question."""
        reply = await self._web.call(
            "conversations_replies",
            channel=thread.channel,
            ts=thread.ts,
            latest=question_ts,
            limit=HISTORY_PAGE,
        )
        earlier = [
            m
            for m in reply.get("messages", [])
            if m.get("user") == self._options.bot_user and str(m.get("ts", "")) < question_ts
        ]
        if not earlier or earlier[-1].get("text") != Phase.WAITING.value:
            return
        await self._status.carried_on(thread, str(earlier[-1].get("ts", "")))


class _ThreadPrompter:
    """Puts a turn's questions to its thread."""

    def __init__(self, questions: OpenQuestions, turn: Turn) -> None:
        self._questions = questions
        self._turn = turn

    def can_prompt(self) -> bool:
        return True

    async def ask(self, question: Question) -> Answer:
        return await self._questions.ask(self._turn, question)
