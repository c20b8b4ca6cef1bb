"""What a Slack turn becomes for the Server: a start, a follow-up or a resume from a late
answer, with the prompt the model reads of the thread."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

from fisk_ai.a2a.vocabulary import AnswerField, AnswerKind
from fisk_ai.agent.outcome import Failed, RunResult, TurnOutcome
from fisk_ai.llm.types import ToolUseBlock
from fisk_ai.serve.oplog import operator_log
from fisk_ai.serve.prompts.elicitation import LateAnswerPrompter, deferred_result
from fisk_ai.serve.server import DeferredAnswer, Work, WorkKind
from fisk_ai.serve.slack.options import CHANNEL_SLACK, SlackOptions
from fisk_ai.serve.slack.people import People
from fisk_ai.serve.slack.questions import Pressed, question_tool
from fisk_ai.serve.slack.turns import Turn
from fisk_ai.serve.slack.web import HISTORY_PAGE, SlackWeb, TokenRefused
from fisk_ai.sessions.fingerprint import ResumeAdvice
from fisk_ai.sessions.fold import Conversation, fold
from fisk_ai.sessions.store import SessionStore
from fisk_ai.tools.questions import Prompter

__all__ = ["TurnHandoff"]

_RESUME_ADVICE = ResumeAdvice(changed="start a new thread", never="; start a new thread")
"""What the operator's log says a thread stopped by a configuration change can do; the thread
itself is told in its own words (``SETUP_CHANGED``)."""

_log = logging.getLogger(__name__)


class TurnHandoff:
    """Hands turns to the Server as Work over the conversations in ``store``; ``web`` reads the
    thread around a turn's mentions and ``people`` names who spoke."""

    def __init__(
        self, web: SlackWeb, people: People, store: SessionStore, options: SlackOptions
    ) -> None:
        self._web = web
        self._people = people
        self._store = store
        self._options = options

    async def work(
        self,
        turn: Turn,
        *,
        prompter: Prompter,
        started: Callable[[], None],
        done: Callable[[RunResult], Awaitable[None]],
    ) -> Work:
        """The Work of ``turn``, which asks its questions through ``prompter``; ``started`` is
        called as the run begins and ``done`` with how it ended."""
        kind = WorkKind.START
        deferred_answer: DeferredAnswer | None = None
        prompt = ""
        if await self._store.exists(turn.session_id):
            kind = WorkKind.FOLLOW_UP
            records = await self._store.read(turn.session_id)
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
                deferred_answer, prompter = _late(turn.pressed, conversation, prompter)
        if kind is not WorkKind.RESUME:
            prompt = await self._prompt(turn, opening=kind is WorkKind.START)
        handle, _ = await self._people.name(turn.starter)

        def run_started() -> None:
            operator_log(
                "Running",
                channel=CHANNEL_SLACK,
                work=turn.session_id,
                caller=turn.starter,
                resume=turn.session_id if kind is not WorkKind.START else None,
            )
            started()

        turn.work = Work(
            kind=kind,
            session_id=turn.session_id,
            done=done,
            events=turn,
            prompt=prompt,
            prompter=prompter,
            run_context=run_started,
            deferred_answer=deferred_answer,
            caller=f"{handle} ({turn.starter})",
            conversation=True,
            resume_advice=_RESUME_ADVICE,
        )
        return turn.work

    async def refused_as_changed(self, turn: Turn, outcome: TurnOutcome) -> bool:
        """Whether a follow-up failed because the agent's configuration changed beyond what a
        thread carries on across: such a turn fails before it claims the journal, where any
        run that got under way claims it first, so the journal still ends where it did."""
        if not isinstance(outcome, Failed) or turn.handed_seq is None:
            return False
        try:
            records = await self._store.read(turn.session_id)
        except Exception as error:
            _log.warning("reading the journal of a failed Slack turn failed: %s", error)
            return False
        return bool(records) and records[-1].seq == turn.handed_seq

    async def _prompt(self, turn: Turn, *, opening: bool) -> str:
        """The turn's prompt: the conversation around it, then its own lines, each prefixed
        with the speaker."""
        context = await self._context(turn, opening=opening)
        parts: list[str] = []
        if context:
            heading = "Earlier in this conversation:" if opening else "Said since my last reply:"
            parts.append(heading + "\n" + "\n".join(context))
        own = [await self._people.spoken(line.user, line.text) for line in turn.lines]
        parts.append("\n".join(own))
        return "\n\n".join(parts)

    async def _context(self, turn: Turn, *, opening: bool) -> list[str]:
        limit = self._options.context_lines
        if limit == 0 or not turn.lines:
            return []
        first = turn.lines[0].ts
        thread = turn.thread
        try:
            if opening and thread.ts == first:
                reply = await self._web.call(
                    "conversations_history", channel=thread.channel, latest=first, limit=limit
                )
                messages = list(reversed(reply.get("messages", []))) if reply else []
            else:
                reply = await self._web.call(
                    "conversations_replies",
                    channel=thread.channel,
                    ts=thread.ts,
                    latest=first,
                    limit=HISTORY_PAGE,
                )
                messages = list(reply.get("messages", [])) if reply else []
        except TokenRefused:
            raise
        except Exception as error:
            _log.warning("reading the conversation around a mention failed: %s", error)
            return []
        bot_user = self._options.bot_user
        if not opening:
            bot = [i for i, m in enumerate(messages) if m.get("user") == bot_user]
            messages = messages[bot[-1] + 1 :] if bot else messages
        mention = f"<@{bot_user}>"
        kept = [
            m
            for m in messages
            if str(m.get("ts", "")) < first
            and m.get("user") != bot_user
            and not m.get("bot_id")
            and mention not in str(m.get("text", ""))
        ][-limit:]
        return [
            await self._people.spoken(str(m.get("user", "")), str(m.get("text", ""))) for m in kept
        ]


def _late(
    pressed: Pressed, conversation: Conversation, fallback: Prompter
) -> tuple[DeferredAnswer | None, Prompter]:
    """What a late answer does: the result of the question tool's deferred call, or the answer
    to the gate's question when the resumed run asks it again."""
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
