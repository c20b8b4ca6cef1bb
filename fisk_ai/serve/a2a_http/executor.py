"""The a2a-sdk's AgentExecutor over the agent's own prompts channel.

An A2A task is one turn of a fisk conversation, asked of the prompts channel with the same
``PromptsClient`` any peer uses, on the worker's own NATS connection: the run takes a slot of
that channel, is journaled under a conversation token, drains with it, and is the same agent.
The A2A ``contextId`` stands for the conversation: the token the first turn's ack carries is
kept against it, and every later message in that context continues the conversation. A task
opened by a request carrying a W3C ``traceparent`` header is part of that caller's trace.

The turn runs in a task of its own, because it outlives the SDK's ``execute`` call whenever it
asks a question: ``execute`` then reports ``input-required`` with the question and returns, and
the caller's next message on the task is the answer, which the next ``execute`` hands to the
waiting question before it carries on reporting the turn. A question unanswered for the
worker's question window is given up as nobody there (the command does not run), so a caller
that walks away holds no slot for longer than a NATS caller could.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import timedelta

from a2a.helpers.proto_helpers import new_task, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message, Role, TaskState

from fisk_ai.a2a.errors import A2AError
from fisk_ai.a2a.events import delta_from_message
from fisk_ai.a2a.messages import Ack, EventMessage, TerminalError, TerminalResult, UnknownEvent
from fisk_ai.a2a.prompts_client import PromptsClient, Terminal, TurnOptions
from fisk_ai.a2a.vocabulary import ErrorCode, StopReason
from fisk_ai.agent.events import TextDeltaEvent
from fisk_ai.serve.a2a_http.questions import answer_from_text, question_text
from fisk_ai.telemetry import parsed_traceparent
from fisk_ai.tools.questions import Answer, Question, QuestionInterrupted
from fisk_ai.util.ids import new_ksuid

__all__ = ["ANSWER_ARTIFACT", "PromptsExecutor"]

_log = logging.getLogger(__name__)

ANSWER_ARTIFACT = "answer"
"""The id of the artifact carrying the answer: streamed in pieces, then sent whole."""


@dataclass(frozen=True)
class _Piece:
    text: str


@dataclass(frozen=True)
class _Asked:
    question: Question
    answer: asyncio.Future[Answer]


@dataclass(frozen=True)
class _Ended:
    terminal: Terminal | None
    failure: str = ""


_Update = _Piece | _Asked | _Ended

_NO_TEXT = "the message carries no text; send the prompt as a text part"


@dataclass(eq=False)
class _Turn:
    """One task's turn: the updates it has not reported yet, and the question it waits on."""

    request: str
    updates: asyncio.Queue[_Update] = field(default_factory=asyncio.Queue)
    waiting: _Asked | None = None
    canceled: bool = False
    streamed: bool = False


class _CallerPrompter:
    """Puts the turn's questions to the A2A caller, each held for ``window`` at most."""

    def __init__(self, turn: _Turn, window: timedelta) -> None:
        self._turn = turn
        self._window = window

    def can_prompt(self) -> bool:
        return not self._turn.canceled

    async def ask(self, question: Question) -> Answer:
        answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._turn.updates.put_nowait(_Asked(question, answer))
        try:
            async with asyncio.timeout(self._window.total_seconds()):
                return await answer
        except TimeoutError:
            raise QuestionInterrupted("the A2A caller did not answer in time") from None


class PromptsExecutor(AgentExecutor):
    """Each A2A task as a turn of the prompts channel of agent ``client.identity``; a turn's
    question waits ``question_window`` for its answer."""

    def __init__(self, client: PromptsClient, *, question_window: timedelta) -> None:
        self._client = client
        self._question_window = question_window
        self._turns: dict[str, _Turn] = {}
        self._tokens: dict[str, str] = {}
        self._running: set[asyncio.Task[None]] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ""
        context_id = context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        text = context.get_user_input()
        turn = self._turns.get(task_id)
        if turn is None:
            message = context.message
            if context.current_task is None and message is not None:
                await event_queue.enqueue_event(
                    new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=[message])
                )
            if not text.strip():
                await updater.reject(_agent_message(updater, _NO_TEXT))
                return
            turn = self._start(
                task_id, context_id, text, _caller_traceparent(context), _streams(context)
            )
        elif turn.waiting is not None:
            asked, turn.waiting = turn.waiting, None
            if not asked.answer.done():
                asked.answer.set_result(answer_from_text(asked.question, text))
        await updater.start_work()
        await self._report(turn, task_id, updater)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ""
        turn = self._turns.pop(task_id, None)
        if turn is not None:
            turn.canceled = True
            await self._client.cancel(turn.request, reason="the A2A caller canceled the task")
            if turn.waiting is not None and not turn.waiting.answer.done():
                turn.waiting.answer.set_exception(QuestionInterrupted("the task was canceled"))
        await TaskUpdater(event_queue, task_id, context.context_id or "").cancel()

    async def aclose(self) -> None:
        """Give up every turn still running: the process is stopping."""
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        self._turns.clear()

    def _start(
        self, task_id: str, context_id: str, text: str, traceparent: str, streams: bool
    ) -> _Turn:
        turn = _Turn(request=new_ksuid())
        self._turns[task_id] = turn
        running = asyncio.get_running_loop().create_task(
            self._run(turn, context_id, text, traceparent, streams),
            name=f"a2a-http task {task_id}",
        )
        self._running.add(running)
        running.add_done_callback(self._running.discard)
        return turn

    async def _run(
        self, turn: _Turn, context_id: str, text: str, traceparent: str, streams: bool
    ) -> None:
        def keep_token(ack: Ack) -> None:
            if ack.accepted and ack.conversation_token:
                self._tokens[context_id] = ack.conversation_token

        def on_event(message: EventMessage | UnknownEvent) -> None:
            delta = delta_from_message(message)
            if isinstance(delta, TextDeltaEvent) and delta.text:
                turn.updates.put_nowait(_Piece(delta.text))

        options = TurnOptions(
            # Pieces cost the agent a message each; only a stream has anybody to show them to.
            deltas=streams,
            request=turn.request,
            on_event=on_event,
            on_ack=keep_token,
            prompter=_CallerPrompter(turn, self._question_window),
            traceparent=traceparent,
        )
        try:
            terminal = await self._client.ask(
                text, token=self._tokens.get(context_id), options=options
            )
        except A2AError as error:
            turn.updates.put_nowait(_Ended(None, str(error)))
        except Exception as error:
            _log.exception("the A2A task's turn failed")
            turn.updates.put_nowait(
                _Ended(None, f"the turn failed: {error or type(error).__name__}")
            )
        else:
            turn.updates.put_nowait(_Ended(terminal))

    async def _report(self, turn: _Turn, task_id: str, updater: TaskUpdater) -> None:
        """Pass on the turn's updates until it asks a question or ends."""
        while True:
            update = await turn.updates.get()
            match update:
                case _Piece(text):
                    await updater.add_artifact(
                        [new_text_part(text)],
                        artifact_id=ANSWER_ARTIFACT,
                        name=ANSWER_ARTIFACT,
                        append=turn.streamed,
                        last_chunk=False,
                    )
                    turn.streamed = True
                case _Asked(question, answer):
                    if answer.done():
                        continue  # given up before the caller saw it
                    turn.waiting = update
                    await updater.requires_input(_agent_message(updater, question_text(question)))
                    return
                case _Ended(terminal, failure):
                    self._turns.pop(task_id, None)
                    await self._end(turn, updater, terminal, failure)
                    return

    async def _end(
        self, turn: _Turn, updater: TaskUpdater, terminal: Terminal | None, failure: str
    ) -> None:
        if turn.canceled:
            return
        match terminal:
            case TerminalResult(stop_reason=StopReason.END_TURN | StopReason.MAX_TOKENS):
                await updater.add_artifact(
                    [new_text_part(terminal.text)],
                    artifact_id=ANSWER_ARTIFACT,
                    name=ANSWER_ARTIFACT,
                    append=False,
                    last_chunk=True,
                )
                await updater.complete()
            case TerminalResult(stop_reason=StopReason.REFUSAL):
                await updater.reject(_agent_message(updater, terminal.text))
            case TerminalResult():
                await updater.failed(
                    _agent_message(updater, f"the turn ended with {terminal.stop_reason}")
                )
            case TerminalError(code=ErrorCode.REJECTED):
                await updater.reject(_agent_message(updater, terminal.error))
            case TerminalError():
                await updater.failed(_agent_message(updater, terminal.error))
            case None:
                await updater.failed(_agent_message(updater, failure))


_STREAMING_METHODS = frozenset({"SendStreamingMessage", "message/stream"})
"""The JSON-RPC methods (1.0 and 0.3) whose caller reads the answer as it is written."""


def _streams(context: RequestContext) -> bool:
    """Whether the request that opened the task streams; the SDK's dispatchers record the
    method in the call context."""
    return context.call_context.state.get("method") in _STREAMING_METHODS


def _caller_traceparent(context: RequestContext) -> str:
    """The W3C ``traceparent`` header of the HTTP request that opened the task; empty when it
    sent none or a malformed one. The SDK's context builder keeps the headers, lower-cased."""
    headers = context.call_context.state.get("headers") or {}
    return parsed_traceparent(str(headers.get("traceparent", "")))


def _agent_message(updater: TaskUpdater, text: str) -> Message:
    return new_text_message(
        text, context_id=updater.context_id, task_id=updater.task_id, role=Role.ROLE_AGENT
    )
