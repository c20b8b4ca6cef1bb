"""The ACP agent: its sessions, each an a2a conversation with the agent this process hosts.

An ACP session id is minted at session/new, before the conversation's journal exists (the
journal is opened by the first prompt). Each session's turns are sent as caller ``acp-<id>``,
which the journal's meta keeps, so session/load finds the conversation of an ACP session id
after a restart; it also takes a fisk session id (what `fisk session ls` shows) as it is.

Every session is the event sink and the prompter of its conversation. Updates are queued as
the run emits them (it must not block) and sent in order by one task per session; a prompt
answers only once its updates are out, and a question waits until the client has seen the tool
call it is about.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    EmbeddedResourceContentBlock,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
    ToolCallUpdate,
)

from fisk_ai import __version__
from fisk_ai.a2a.conversation import AgentConversation, TurnFailed
from fisk_ai.a2a.messages import Identity
from fisk_ai.acp.questions import (
    REJECT_ALWAYS_NOTICE,
    REMEMBERED_REFUSAL,
    answer_of,
    input_notice,
    options_for,
    rejects_always,
    was_cancelled,
)
from fisk_ai.acp.updates import SessionUpdate, UpdateWriter, tool_kind, tool_title, turn_end
from fisk_ai.agent.events import WarningEvent
from fisk_ai.errors import FiskError
from fisk_ai.presentation import warning_text
from fisk_ai.tools.questions import (
    Answer,
    ApprovalChoice,
    ApprovalQuestion,
    InputQuestion,
    Question,
    QuestionInterrupted,
)
from fisk_ai.util.cancelling import cancel_and_wait
from fisk_ai.util.ids import new_ksuid
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from acp.interfaces import Client

    from fisk_ai.agent.events import DeltaEvent, Event
    from fisk_ai.serve.local import LocalAgent

__all__ = ["AcpAgent", "caller_of"]

_log = logging.getLogger(__name__)

CALLER_PREFIX = "acp-"


def caller_of(session_id: str) -> str:
    """The a2a sender name, journaled as the conversation's caller, of ACP session
    ``session_id``."""
    return f"{CALLER_PREFIX}{session_id}"


class AcpSession:
    """One ACP session: its conversation, and the sink and prompter that conversation uses."""

    def __init__(self, session_id: str, client: Client, agent: LocalAgent) -> None:
        self.id = session_id
        self._client = client
        self._tools = agent.tools
        self._writer = UpdateWriter(agent.tools)
        self._updates: asyncio.Queue[SessionUpdate] = asyncio.Queue()
        self._sending = asyncio.get_running_loop().create_task(self._send_updates())
        self._refused_always: set[str] = set()
        self.cancelling = False
        self.idle = asyncio.Event()
        self.idle.set()
        endpoint = agent.endpoint
        self.conversation = AgentConversation(
            endpoint.transport,
            endpoint.identity,
            request_timeout=endpoint.request_timeout,
            events=self,
            prompter=self,
            sender=Identity(name=caller_of(session_id)),
        )

    def emit(self, event: Event) -> None:
        if isinstance(event, WarningEvent):
            # ACP has no update for an advisory; the operator's log gets it.
            _log.warning("session %s: %s", self.id, warning_text(event))
        self._queue(self._writer.event(event))

    def emit_delta(self, event: DeltaEvent) -> None:
        self._queue(self._writer.delta(event))

    def say(self, text: str) -> None:
        """An agent message of fisk's own (a notice, a question it cannot ask otherwise)."""
        self._queue(update_agent_message_text(f"\n{text}\n"))

    async def sent(self) -> None:
        """Wait until every update queued so far has been written (or found undeliverable)."""
        await self._updates.join()

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        if not self.idle.is_set():
            raise RequestError.invalid_request(
                {"details": "a prompt of this session is still running; wait for its answer"}
            )
        self.idle.clear()
        self.cancelling = False
        try:
            yield
        finally:
            self.idle.set()

    async def cancel(self) -> None:
        """session/cancel: stop the turn at its next safe point, as Esc does."""
        if self.idle.is_set():
            return
        self.cancelling = True
        await self.conversation.stop()

    async def close(self) -> None:
        await cancel_and_wait(self._sending)

    def can_prompt(self) -> bool:
        return True

    async def ask(self, question: Question) -> Answer:
        await self.sent()
        if isinstance(question, InputQuestion):
            self.say(input_notice(question))
            return None
        if isinstance(question, ApprovalQuestion):
            if question.tool_name in self._refused_always:
                self._writer.declined(question.tool_use_id)
                self.say(REMEMBERED_REFUSAL.format(command=_command_of(question)))
                return ApprovalChoice.NO
            tool_call = ToolCallUpdate(
                tool_call_id=question.tool_use_id or self._writer.last_tool_call,
                title=tool_title(question.display, question.argv),
                kind=tool_kind(self._tools, question.tool_name),
                status="pending",
            )
        else:
            tool_call = ToolCallUpdate(
                tool_call_id=self._writer.last_tool_call or new_ksuid(),
                title=single_line(question.question),
                kind="other",
                status="pending",
            )
        refusal: Answer = ApprovalChoice.NO if isinstance(question, ApprovalQuestion) else None
        try:
            response = await self._client.request_permission(
                session_id=self.id, tool_call=tool_call, options=options_for(question)
            )
        except ConnectionError:
            # The client went away: the turn stops first, so the question is dropped rather
            # than taken as an answer, and the call does not run.
            await self.conversation.stop()
            raise QuestionInterrupted("the ACP client went away") from None
        except (RequestError, ValueError) as failure:
            _log.warning("the client could not answer a permission request: %s", failure)
            if isinstance(question, ApprovalQuestion):
                self._writer.declined(tool_call.tool_call_id)
            return refusal
        if was_cancelled(response) and self.cancelling:
            raise QuestionInterrupted("the client cancelled the turn")
        answer = answer_of(question, response)
        if isinstance(question, ApprovalQuestion) and answer is ApprovalChoice.NO:
            self._writer.declined(tool_call.tool_call_id)
            if rejects_always(response):
                self._refused_always.add(question.tool_name)
                self.say(REJECT_ALWAYS_NOTICE.format(command=_command_of(question)))
        return answer

    def _queue(self, update: SessionUpdate | None) -> None:
        if update is not None:
            self._updates.put_nowait(update)

    async def _send_updates(self) -> None:
        while True:
            update = await self._updates.get()
            try:
                await self._client.session_update(session_id=self.id, update=update)
            except Exception as failure:
                # A client that went away must not stop the run; the turn ends as it would.
                _log.debug("a session update was not delivered: %s", failure)
            finally:
                self._updates.task_done()


def _command_of(question: ApprovalQuestion) -> str:
    return f'"{single_line(question.command)}"'


class AcpAgent:
    """The ACP agent side: what `fisk acp` answers with for the agent ``hosted`` names."""

    def __init__(self, hosted: LocalAgent, *, identity: str) -> None:
        self._hosted = hosted
        self._identity = identity
        self._client: Client | None = None
        self._sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **_: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=False, sse=False),
            ),
            auth_methods=[],
            agent_info=Implementation(name="fisk-ai", title=self._identity, version=__version__),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        _ignore_mcp_servers(mcp_servers)
        session = self._open(new_ksuid())
        return NewSessionResponse(session_id=session.id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        _ignore_mcp_servers(mcp_servers)
        journal = await self._journal_of(session_id)
        if journal is None:
            raise RequestError.invalid_params(
                {
                    "sessionId": session_id,
                    "details": f"no stored conversation belongs to session {session_id}; "
                    "pass an id session/new returned or one fisk session ls shows",
                }
            )
        session = self._sessions.get(session_id) or self._open(session_id)
        try:
            replayed = await session.conversation.read(journal)
        except FiskError as failure:
            raise RequestError.internal_error({"details": str(failure)}) from None
        for event in replayed:
            session.emit(event)
        session.conversation.adopt(journal)
        await session.sent()
        return LoadSessionResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        session = self._session(session_id)
        text = prompt_text(prompt)
        conversation = session.conversation
        async with session.turn():
            try:
                if conversation.handle:
                    result = await conversation.follow_up(text)
                else:
                    result = await conversation.start(text)
            except TurnFailed as failure:
                await session.sent()
                raise RequestError.internal_error({"details": str(failure)}) from None
            end = turn_end(result.outcome, cancelled=session.cancelling)
            if end.notice:
                session.say(end.notice)
            await session.sent()
        if end.error:
            raise RequestError.internal_error({"details": end.error})
        return PromptResponse(stop_reason=end.stop_reason)

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            await session.cancel()

    async def wind_down(self) -> None:
        """The client is gone: stop every running turn, wait for each to end (its journal
        kept, resumable), and let the sessions go."""
        running = [session for session in self._sessions.values() if not session.idle.is_set()]
        for session in running:
            await session.cancel()
        for session in running:
            await session.idle.wait()
        for session in self._sessions.values():
            await session.close()

    def _open(self, session_id: str) -> AcpSession:
        if self._client is None:
            raise RequestError.internal_error({"details": "no client is connected"})
        session = AcpSession(session_id, self._client, self._hosted)
        self._sessions[session_id] = session
        return session

    def _session(self, session_id: str) -> AcpSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "details": "no such session; call session/new first"}
            )
        return session

    async def _journal_of(self, session_id: str) -> str | None:
        """The journal of ACP session ``session_id``: the conversation it holds in this
        process, a journal of that id, or the journal an ACP session of that id started."""
        from fisk_ai.sessions import SessionError, fold

        held = self._sessions.get(session_id)
        if held is not None and held.conversation.handle:
            return held.conversation.handle
        store = self._hosted.store
        with contextlib.suppress(SessionError):
            if await store.exists(session_id):
                return session_id
        caller = caller_of(session_id)
        for summary in await store.list():
            with contextlib.suppress(SessionError):
                if fold(await store.read(summary.run_id)).meta.caller == caller:
                    return summary.run_id
        return None


def prompt_text(blocks: list[Any]) -> str:
    """The prompt as the model reads it: the text blocks, a linked resource as its URI, and an
    embedded text resource as its text under its URI."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(block.uri)
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
            block.resource, TextResourceContents
        ):
            parts.append(f"{block.resource.uri}:\n{block.resource.text}")
    return "\n\n".join(part for part in parts if part)


def _ignore_mcp_servers(servers: list[Any] | None) -> None:
    if servers:
        _log.warning(
            "the client offered %d MCP server(s); fisk acp uses the MCP servers its agent.yaml "
            "names (mcp_clients) and ignores these",
            len(servers),
        )
