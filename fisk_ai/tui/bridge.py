"""The one place the workstation meets its agent: events become Textual messages, questions become
futures a modal resolves, and prompts become turns of the a2a conversation.

The agent is reached over a2a whether this process hosts it or somebody else runs it, so the
screens see ``EventArrived``, ``DeltaArrived``, ``QuestionAsked`` and what ``start``, ``resume``
and ``follow_up`` return, never the protocol or a runner.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from textual.message import Message

from fisk_ai.agent.events import DeltaEvent, Event
from fisk_ai.multiplex import PaneState, Reporter
from fisk_ai.presentation import blocked_reason
from fisk_ai.tools.questions import Answer, Question, QuestionInterrupted

if TYPE_CHECKING:
    from fisk_ai.a2a.conversation import AgentConversation
    from fisk_ai.agent.outcome import RunResult
    from fisk_ai.sessions import Conversation, SessionStore
    from fisk_ai.sessions.file import SessionLease
    from fisk_ai.tools.toolset import ToolSet


class EventArrived(Message):
    """One event of the run, posted from the run's task."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class DeltaArrived(Message):
    """The next piece of the answer the model is writing, posted from the run's task."""

    def __init__(self, event: DeltaEvent) -> None:
        super().__init__()
        self.event = event


class QuestionAsked(Message):
    """The run waits on a person; resolve ``answer`` (or fail it with QuestionInterrupted)."""

    def __init__(self, question: Question, answer: asyncio.Future[Answer]) -> None:
        super().__init__()
        self.question = question
        self.answer = answer


Post = Callable[[Message], object]


class RunBridge:
    """The conversation's event sink and prompter, and the way the screen starts turns.

    Build it, hand it to the conversation as ``events`` and ``prompter``, then ``bind`` the
    conversation and the session store its agent journals to (None for a remote agent); the
    screen calls ``attach`` with its ``post_message`` before the first turn.
    """

    def __init__(self, reporter: Reporter | None = None) -> None:
        self._reporter = reporter
        self._conversation: AgentConversation | None = None
        self._store: SessionStore | None = None
        self._tools: ToolSet | None = None
        self._post: Post | None = None
        self._pending: asyncio.Future[Answer] | None = None
        self._one_question = asyncio.Lock()
        self._stopping: set[asyncio.Task[None]] = set()
        self._lease: SessionLease | None = None

    def report_to(self, reporter: Reporter) -> None:
        self._reporter = reporter

    def bind(
        self,
        conversation: AgentConversation,
        *,
        store: SessionStore | None = None,
        tools: ToolSet | None = None,
    ) -> None:
        self._conversation = conversation
        self._store = store
        self._tools = tools

    @property
    def tools(self) -> ToolSet | None:
        """The hosted agent's tools, to show stored calls as their command lines."""
        return self._tools

    @property
    def store(self) -> SessionStore | None:
        """The session store of the run, for reading conversations back; None when not bound."""
        return self._store

    async def conversation(self, session_id: str) -> Conversation | None:
        """The stored conversation ``session_id`` as journaled so far; None without a store."""
        if self._store is None:
            return None
        from fisk_ai.sessions import fold

        return fold(await self._store.read(session_id))

    async def replay(self, session_id: str) -> list[Event]:
        """The end of conversation ``session_id`` as its agent replays it over a2a, for an agent
        whose store this process cannot read."""
        return await self._require_conversation().read(session_id)

    def attach(self, post: Post) -> None:
        self._post = post

    @property
    def session_id(self) -> str:
        return self._conversation.handle if self._conversation is not None else ""

    def emit(self, event: Event) -> None:
        if self._post is not None:
            self._post(EventArrived(event))

    def emit_delta(self, event: DeltaEvent) -> None:
        if self._post is not None:
            self._post(DeltaArrived(event))

    def can_prompt(self) -> bool:
        return self._post is not None

    async def ask(self, question: Question) -> Answer:
        async with self._one_question:
            post = self._post
            if post is None:
                raise QuestionInterrupted("nobody is at the screen to answer")
            answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
            self._pending = answer
            self._report(PaneState.BLOCKED, blocked_reason(question))
            try:
                post(QuestionAsked(question, answer))
                return await answer
            finally:
                self._pending = None
                self._report(PaneState.WORKING)

    def interrupt(self) -> None:
        """Give up the question on screen: not an answer, so the run stops at its safe point."""
        pending = self._pending
        if pending is not None and not pending.done():
            pending.set_exception(QuestionInterrupted("the question was interrupted"))

    def request_stop(self) -> None:
        """Ask the turn in flight to stop at its next safe point. The agent hears of it before
        the question on screen is given up, so it drops the question rather than taking that as
        an answer."""
        conversation = self._conversation

        async def stop() -> None:
            if conversation is not None:
                await conversation.stop()
            self.interrupt()

        task = asyncio.get_running_loop().create_task(stop())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    def hold_open(self) -> None:
        """Hold the conversation this screen has open, so that nobody removes it under the
        screen: a removal is refused naming this process. Only a file store can be held;
        with any other the conversation is as removable as before."""
        session_id = self.session_id
        lease = self._lease
        if lease is not None and lease.run_id == session_id:
            return
        self.release()
        from fisk_ai.sessions.file import FileSessionStore

        if not session_id or not isinstance(self._store, FileSessionStore):
            return
        import os
        import socket

        from fisk_ai.sessions import SessionError

        holder = f"the workstation fisk run (pid {os.getpid()} on {socket.gethostname()})"
        with contextlib.suppress(SessionError):
            self._lease = self._store.lease(session_id, holder)

    def release(self) -> None:
        """Let go of the conversation's hold; the screen no longer has it open."""
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    async def start(self, prompt: str) -> RunResult:
        conversation = self._require_conversation()
        return await self._turn(lambda: conversation.start(prompt))

    async def resume(self, session_id: str, *, force: bool = False) -> RunResult:
        conversation = self._require_conversation()
        return await self._turn(lambda: conversation.resume(session_id, force=force))

    async def follow_up(self, prompt: str) -> RunResult:
        conversation = self._require_conversation()
        return await self._turn(lambda: conversation.follow_up(prompt))

    async def clear(self) -> None:
        """Let go of the conversation; the next prompt starts a new one."""
        self._require_conversation().clear()
        self.release()

    async def _turn(self, body: Callable[[], Awaitable[RunResult]]) -> RunResult:
        # Working is reported on submission, not on acceptance: the work is already on its way.
        self._report(PaneState.WORKING)
        self.hold_open()
        try:
            return await body()
        finally:
            self.hold_open()
            self._report(PaneState.IDLE)

    def _require_conversation(self) -> AgentConversation:
        if self._conversation is None:
            raise RuntimeError("bind a conversation to the bridge before starting a turn")
        return self._conversation

    def _report(self, state: PaneState, reason: str = "") -> None:
        if self._reporter is not None:
            self._reporter.report(state, reason)
