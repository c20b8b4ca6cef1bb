"""A terminal's conversation with an agent over a2a, one turn at a time.

Both surfaces hold one of these, whether the agent is hosted in this process behind the embedded
broker or is somebody else's reached through a NATS context: they see the run's events as loop
events, answer its questions through their prompter, and get how each turn ended as a RunResult.
The conversation is the token the first ack handed back; a follow-up or a resume sends it again.

``handle`` is what ``fisk run --resume`` takes to continue the conversation: the token. For a
hosted run the token is the session id itself (see ``fisk_ai.serve.prompts.LOCAL``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from fisk_ai.a2a.client import DEFAULT_CLIENT_IDENTITY
from fisk_ai.a2a.events import delta_from_message, event_from_message
from fisk_ai.a2a.messages import (
    Ack,
    EventMessage,
    Identity,
    TerminalError,
    UnknownEvent,
)
from fisk_ai.a2a.outcome import totals_of
from fisk_ai.a2a.prompts_client import MAX_REPLAY_BLOCKS, PromptsClient, Terminal, TurnOptions
from fisk_ai.agent.events import DeltaSink, Event, EventSink, StatusEvent
from fisk_ai.agent.outcome import Crashed, NotRun, RunResult
from fisk_ai.errors import FiskError
from fisk_ai.util.ids import new_ksuid

if TYPE_CHECKING:
    from fisk_ai.a2a.transport import Transport
    from fisk_ai.tools.questions import Prompter

__all__ = ["AgentConversation", "TurnFailed"]


@dataclass
class _ReplayedEvents:
    """The loop events of a replay, without the statuses that bracket it."""

    events: list[Event] = field(default_factory=list)

    def take(self, event: Event | None) -> None:
        if event is not None and not isinstance(event, StatusEvent):
            self.events.append(event)


class TurnFailed(FiskError):
    """The agent refused the turn (busy, draining, no such conversation, the resume gate, ...)
    or it crashed running it; the message is the agent's sentence."""

    def __init__(self, message: str, outcome: NotRun | Crashed | None = None) -> None:
        super().__init__(message)
        self.outcome = outcome


class AgentConversation:
    """Turns of one conversation with agent ``identity`` on ``transport``.

    Events go to ``events``, questions to ``prompter``. ``stop`` asks the turn in flight to stop
    at its next safe point; ``clear`` lets the conversation go, so the next ``start`` opens a new
    one.
    """

    def __init__(
        self,
        transport: Transport,
        identity: str,
        *,
        request_timeout: timedelta,
        events: EventSink,
        prompter: Prompter,
        sender: Identity = DEFAULT_CLIENT_IDENTITY,
    ) -> None:
        self._client = PromptsClient(
            transport, identity, request_timeout=request_timeout, sender=sender
        )
        self._events = events
        self._prompter = prompter
        self._token: str | None = None
        self._request: str | None = None

    @property
    def identity(self) -> str:
        return self._client.identity

    @property
    def handle(self) -> str:
        """The conversation's token ("" before the first ack): what --resume takes."""
        return self._token or ""

    async def start(self, prompt: str) -> RunResult:
        """Open a new conversation with ``prompt``."""
        self._token = None
        return await self._turn(
            lambda options: self._client.ask(prompt, options=options), TurnOptions()
        )

    async def follow_up(self, prompt: str) -> RunResult:
        """The next turn of this conversation."""
        token = self._require_token()
        return await self._turn(
            lambda options: self._client.ask(prompt, token=token, options=options), TurnOptions()
        )

    async def resume(self, handle: str, *, force: bool = False) -> RunResult:
        """Continue conversation ``handle`` where its run stopped; it becomes this one."""
        self._token = handle
        return await self._turn(
            lambda options: self._client.resume(handle, options), TurnOptions(force=force)
        )

    async def stop(self) -> None:
        """Ask the turn in flight to stop at its next safe point; it then ends suspended. The
        cancel goes before any question on screen is given up, so the worker drops the question
        rather than taking the giving up as an answer."""
        request = self._request
        if request is not None:
            await self._client.cancel(request, reason="stopped by the operator")

    async def read(self, handle: str, *, blocks: int = MAX_REPLAY_BLOCKS) -> list[Event]:
        """The last ``blocks`` blocks of conversation ``handle`` (whole turns), as loop events;
        reading runs nothing and leaves this conversation as it is."""
        replayed = _ReplayedEvents()
        terminal = await self._client.read(
            handle,
            replay=blocks,
            on_event=lambda message: replayed.take(event_from_message(message)),
        )
        if isinstance(terminal, TerminalError):
            raise TurnFailed(terminal.error)
        return replayed.events

    def adopt(self, handle: str) -> None:
        """Take up stored conversation ``handle`` without running a turn: the next
        ``follow_up`` continues it."""
        self._token = handle

    def clear(self) -> None:
        """Let go of the conversation; the next ``start`` opens another."""
        self._token = None

    async def _turn(
        self, send: Callable[[TurnOptions], Awaitable[Terminal]], options: TurnOptions
    ) -> RunResult:
        """Run one turn, tagged so ``stop`` can name it, listening as this conversation does."""
        if self._request is not None:
            raise RuntimeError("a turn of this conversation is already running")
        self._request = new_ksuid()
        listening = dataclasses.replace(
            options,
            request=self._request,
            on_event=self._on_event,
            prompter=self._prompter,
            on_ack=self._on_ack,
            # Only a sink that renders the answer as it is written asks for it in pieces.
            deltas=isinstance(self._events, DeltaSink),
        )
        try:
            terminal = await send(listening)
        finally:
            self._request = None
        return self._result(terminal)

    def _on_ack(self, ack: Ack) -> None:
        if ack.accepted and ack.conversation_token:
            self._token = ack.conversation_token

    def _on_event(self, message: EventMessage | UnknownEvent) -> None:
        delta = delta_from_message(message)
        if delta is not None:
            if isinstance(self._events, DeltaSink):
                self._events.emit_delta(delta)
            return
        event = event_from_message(message)
        if event is not None:
            self._events.emit(event)

    def _require_token(self) -> str:
        if self._token is None:
            raise RuntimeError("start the conversation before sending a follow-up")
        return self._token

    def _result(self, terminal: Terminal) -> RunResult:
        result = totals_of(terminal, self.handle)
        # Refused, or ended by a crash: there is no turn's result to show, only the sentence.
        if isinstance(result.outcome, NotRun | Crashed):
            raise TurnFailed(result.outcome.message, result.outcome)
        return result
