"""The Slack channel: mentions in a thread become turns of the thread's conversation.

The channel the Server hosts, made of its parts: the ``Intake`` of what Slack sends, the
``TurnQueue`` of admitted turns, the ``TurnHandoff`` making a turn Work, the ``StatusPresenter``
of each turn's status message, and the ``OpenQuestions`` a run waits on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from functools import partial
from typing import TYPE_CHECKING

from fisk_ai.agent.outcome import Abandoned, Deferred, NotRun, RunResult, Suspended
from fisk_ai.agent.resources import current_tools
from fisk_ai.errors import FiskError
from fisk_ai.serve.oplog import operator_log
from fisk_ai.serve.server import Work
from fisk_ai.serve.slack.handoff import TurnHandoff
from fisk_ai.serve.slack.intake import Intake
from fisk_ai.serve.slack.open_questions import OpenQuestions
from fisk_ai.serve.slack.options import CHANNEL_SLACK, SlackOptions
from fisk_ai.serve.slack.people import People
from fisk_ai.serve.slack.status import StatusPresenter
from fisk_ai.serve.slack.text import DRAINED_BEFORE_START
from fisk_ai.serve.slack.turns import Turn, TurnQueue
from fisk_ai.serve.slack.web import SlackWeb, TokenRefused

if TYPE_CHECKING:
    from slack_sdk.socket_mode.aiohttp import SocketModeClient
    from slack_sdk.web.async_client import AsyncWebClient

    from fisk_ai.agent.resources import Resources

__all__ = ["CHANNEL_SLACK", "SlackChannel"]

_log = logging.getLogger(__name__)


class SlackChannel:
    """Turns of Slack threads for a Server whose runs use ``resources``; ``web`` is the bot's
    Web API client and ``socket`` the socket-mode connection, opened by ``open``."""

    def __init__(
        self,
        web: AsyncWebClient,
        socket: SocketModeClient,
        resources: Resources,
        options: SlackOptions,
    ) -> None:
        if options.workers < 1:
            raise ValueError("workers must be at least 1")
        self._socket = socket
        self._options = options
        self._background: set[asyncio.Task[None]] = set()
        self._web = SlackWeb(web, self._faulted)
        people = People(self._web)
        self._status = StatusPresenter(self._web, current_tools(resources), options)
        self._turns = TurnQueue(options, self._status.edits_for, self._in_background)
        self._questions = OpenQuestions(self._web, self._status, options, self._in_background)
        self._handoff = TurnHandoff(self._web, people, resources.store, options)
        self._intake = Intake(
            options, self._turns, self._questions, self._status, self._web, people
        )

    @property
    def name(self) -> str:
        return CHANNEL_SLACK

    @property
    def options(self) -> SlackOptions:
        return self._options

    async def open(self) -> None:
        """Start taking envelopes off the socket."""
        self._socket.socket_mode_request_listeners.append(self._intake.receive)
        self._intake.start()
        # Asked for here, so a refused app token raises rather than being retried forever by
        # the client's reconnect loop.
        self._socket.wss_uri = await self._socket.issue_new_wss_url()
        # slack-sdk leaves connect and close unannotated.
        await self._socket.connect()  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        """Take no more mentions. Turns admitted but never started are told they will not run;
        running turns stop at their next step, and say so. The socket stays open (``shutdown``
        closes it) so running turns still get stop presses and answers."""
        for turn in await self._turns.close():
            await self._status.tell(turn, DRAINED_BEFORE_START)

    async def shutdown(self) -> None:
        """Close the socket once the Server is done with the channel."""
        self._turns.refuse_more()
        await self._intake.stop()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self._socket.close()  # type: ignore[no-untyped-call]

    async def next(self) -> Work | None:
        turn = await self._turns.take()
        if turn is None:
            return None
        try:
            work = await self._handoff.work(
                turn,
                prompter=self._questions.prompter(turn),
                started=partial(self._status.started, turn),
                done=partial(self._finish, turn),
            )
        except Exception as error:
            await self._turns.finished(turn)
            if isinstance(error, TokenRefused):
                raise error.error from None
            raise
        if self._turns.draining:
            work.suspend.set()
        return work

    async def _finish(self, turn: Turn, result: RunResult) -> None:
        try:
            await self._status.stop_following(turn)
            outcome = result.outcome
            operator_log(
                "Ending a run",
                channel=CHANNEL_SLACK,
                caller=turn.starter,
                session=result.session_id,
                outcome=type(outcome).__name__.lower(),
                reason=outcome.message or None,
            )
            await self._status.report(
                turn,
                outcome,
                setup_changed=await self._handoff.refused_as_changed(turn, outcome),
                draining=self._turns.draining,
            )
        finally:
            folded = await self._turns.finished(turn, return_folded=_returns_folded(result))
            for waiting in folded:
                lines = "\n".join(f"> {line.text}" for line in waiting.lines)
                await self._status.tell(
                    waiting, f":leftwards_arrow_with_hook: I did not get to:\n{lines}"
                )

    def app_token_refused(self, code: str) -> None:
        """Slack refused the app-level token when the socket asked for a connection: a fault,
        since no mention can reach the worker any more."""
        self._faulted(
            FiskError(
                f"Slack refused SLACK_APP_TOKEN ({code}) when the socket reconnected; the worker "
                "stops so a supervisor can restart it with a valid app-level token"
            )
        )

    def _faulted(self, error: FiskError) -> None:
        self._turns.fault(error)

    def _in_background(self, work: Awaitable[None]) -> None:
        """Run ``work`` beside the intake, which must not wait on it; ``shutdown`` waits for
        it."""

        async def logged() -> None:
            try:
                await work
            except Exception as error:
                _log.warning("a Slack channel task failed: %s", error)

        task = asyncio.get_running_loop().create_task(logged())
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _returns_folded(result: RunResult) -> bool:
    """Whether the turn ended so that mentions folded behind it go back to the thread."""
    return isinstance(result.outcome, Deferred | Suspended | Abandoned | NotRun)
