"""What Slack sends the channel, and what each piece is: a mention starts a turn, folds into a
waiting one, or answers the thread's open question; a press answers a question, opens a
decline's reason, or stops a turn.

Envelopes are acknowledged at once; one task then handles them in the order they came, so the
mentions of one person fold together as they were typed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import TYPE_CHECKING, Any

from fisk_ai.a2a.vocabulary import AnswerField, AnswerKind
from fisk_ai.serve.oplog import operator_log
from fisk_ai.serve.slack.open_questions import OpenQuestions
from fisk_ai.serve.slack.options import CHANNEL_SLACK, SlackOptions, Thread
from fisk_ai.serve.slack.people import People
from fisk_ai.serve.slack.questions import Pressed, parse_press
from fisk_ai.serve.slack.status import StatusPresenter
from fisk_ai.serve.slack.text import STOP_ACTION, Phase
from fisk_ai.serve.slack.turns import Folded, Line, TurnQueue
from fisk_ai.serve.slack.web import SlackWeb, TokenRefused
from fisk_ai.tools.questions import InputQuestion

if TYPE_CHECKING:
    from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
    from slack_sdk.socket_mode.request import SocketModeRequest

__all__ = ["Intake"]

_BUSY_REPLY = (
    ":hourglass: I'm busy with other people's questions right now. Please mention me again "
    "in a few minutes."
)
_CLOSED_REPLY = ":zzz: The bot is restarting. Mention me again in a few minutes."
_SEEN_LIMIT = 1024
"""Mentions remembered, so one Slack delivers twice starts one turn."""

_log = logging.getLogger(__name__)


class Intake:
    """Takes what Slack sends: turns go to ``turns``, answers to ``questions``, and replies
    through ``web``; ``status`` shows what became of a turn and ``people`` names who answered."""

    def __init__(
        self,
        options: SlackOptions,
        turns: TurnQueue,
        questions: OpenQuestions,
        status: StatusPresenter,
        web: SlackWeb,
        people: People,
    ) -> None:
        self._options = options
        self._turns = turns
        self._questions = questions
        self._status = status
        self._web = web
        self._people = people
        self._seen: dict[str, None] = {}
        self._envelopes: asyncio.Queue[SocketModeRequest | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Handle the envelopes ``receive`` takes, from now on."""
        self._task = asyncio.get_running_loop().create_task(self._take_envelopes())

    async def stop(self) -> None:
        """Handle the envelopes already taken, then no more."""
        if self._task is not None:
            self._envelopes.put_nowait(None)
            with contextlib.suppress(Exception):
                await self._task

    async def receive(self, client: AsyncBaseSocketModeClient, request: SocketModeRequest) -> None:
        """Acknowledge an envelope and queue it: the socket's listener."""
        from slack_sdk.socket_mode.response import SocketModeResponse

        await client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
        self._envelopes.put_nowait(request)

    async def _take_envelopes(self) -> None:
        while (request := await self._envelopes.get()) is not None:
            try:
                await self._handle(request)
            except TokenRefused as refused:
                self._turns.fault(refused.error)
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
        if self._turns.closed:
            await self._web.post(thread, _CLOSED_REPLY)
            return
        asked = self._questions.in_thread(thread)
        if asked is not None:
            if isinstance(asked.question, InputQuestion):
                who = await self._people.speaker(user)
                typed = Pressed("", AnswerKind.INPUT, AnswerField.VALUE, text=text)
                await self._questions.deliver(asked, typed, who)
                return
            link = await self._web.permalink(channel, asked.message_ts)
            await self._web.post(
                thread, f":point_up: Please answer the question above first: {link}"
            )
            return
        added = await self._turns.add_mention(thread, Line(user, text, ts))
        if isinstance(added, Folded):
            return
        if added is None:
            operator_log("Refused a mention", channel=CHANNEL_SLACK, caller=user, reason="capacity")
            await self._web.post(thread, _BUSY_REPLY)
            return
        operator_log(
            "Accepted a prompt",
            channel=CHANNEL_SLACK,
            thread=f"{channel}/{thread.ts}",
            caller=user,
            session=added.session_id,
            prompt_bytes=len(text.encode()),
        )
        await self._status.post(added)

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
                await self._questions.open_reason(channel, message_ts, pressed, payload)
                continue
            who = await self._people.speaker(user)
            asked = self._questions.get(pressed.question_id)
            if asked is not None:
                await self._questions.deliver(asked, pressed, who)
            else:
                await self._answer_late(thread, message_ts, user, who, pressed, payload)

    async def _stop(self, turn_id: str, thread: Thread) -> None:
        running = self._turns.running_in(thread)
        if running is not None and running.id == turn_id and running.work is not None:
            running.work.suspend.set()
            self._questions.interrupt(running)
            self._status.show(running, Phase.STOPPING)
            return
        waiting = await self._turns.withdraw(turn_id)
        if waiting is not None:
            await self._status.tell(waiting, ":stop_button: Stopped before it started.")

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
        from the answer."""
        await self._questions.answered_late(thread, message_ts, who, pressed, payload)
        if self._turns.closed:
            await self._web.post(thread, _CLOSED_REPLY)
            return
        turn = await self._turns.add_answer(thread, user, pressed)
        operator_log(
            "A question was answered",
            channel=CHANNEL_SLACK,
            caller=user,
            question=pressed.question_id,
            session=turn.session_id,
            late=True,
        )
        await self._status.post(turn)

    def _without_bot(self, text: str) -> str:
        return re.sub(rf"<@{re.escape(self._options.bot_user)}>\s*", "", text).strip()
