"""The status message of a Slack turn: what the run is doing, and how the turn ended.

The message is edited as the run works, showing the answer as the model writes it, at the pace
``edits`` keeps; when the run ends the answer is posted as a message of its own and the status
message becomes a link to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from functools import partial
from typing import Any

from fisk_ai.agent.events import (
    StatusEvent,
    StatusPhase,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
    WarningKind,
)
from fisk_ai.agent.outcome import Completed, Declined, TurnOutcome
from fisk_ai.agent.resources import CurrentTools
from fisk_ai.serve.slack.edits import Edit, Pace, StatusEdits
from fisk_ai.serve.slack.options import SlackOptions, Thread
from fisk_ai.serve.slack.text import (
    CARRIED_ON,
    SETUP_CHANGED,
    Phase,
    answer_blocks,
    cut_answer,
    ending_line,
    linked_blocks,
    next_phase,
    status_blocks,
)
from fisk_ai.serve.slack.turns import STARTED, Started, Turn
from fisk_ai.serve.slack.web import SlackWeb
from fisk_ai.tools.base import AsksOperator, Tool
from fisk_ai.tools.builtin.knowledge import KnowledgeEnumerate, KnowledgeSearch

__all__ = ["StatusPresenter"]

_PROBLEM_LINE = {
    WarningKind.RUN_CRASHED.value: "A tool ran into a problem on the way to this answer.",
    WarningKind.MEMORY_INDEX_UNAVAILABLE.value: (
        "My memory index could not be read on the way to this answer."
    ),
}
_TIMED_OUT = "A tool ran out of time on the way to this answer."
_PACES_KEPT = 1024
"""Threads whose pace is remembered before the paces holding nothing back are forgotten."""

_log = logging.getLogger(__name__)


class StatusPresenter:
    """The status messages of a channel's turns, posted and edited through ``web``. A tool call
    shows as what the tool is, asked of the current set of ``tools``."""

    def __init__(self, web: SlackWeb, tools: CurrentTools, options: SlackOptions) -> None:
        self._web = web
        self._tools = tools
        self._options = options
        self._paces: dict[Thread, Pace] = {}

    def edits_for(self, turn: Turn) -> StatusEdits:
        """The edits of ``turn``'s status message, kept to its thread's pace."""
        return self._edits(partial(self._edit_status, turn), turn.thread)

    def _edits(self, edit: Edit, thread: Thread) -> StatusEdits:
        return StatusEdits(
            edit,
            self._pace(thread),
            interval=self._options.edit_interval.total_seconds(),
            clock=asyncio.get_running_loop().time,
            sleep=asyncio.sleep,
        )

    def _pace(self, thread: Thread) -> Pace:
        """The pace of ``thread``'s status edits, shared by its turns. Paces that no longer
        hold anything back are forgotten once many threads have had one."""
        pace = self._paces.get(thread)
        if pace is None:
            if len(self._paces) >= _PACES_KEPT:
                now = asyncio.get_running_loop().time()
                self._paces = {t: p for t, p in self._paces.items() if p.ready_at > now}
            pace = self._paces[thread] = Pace()
        return pace

    async def post(self, turn: Turn) -> None:
        """Post the status message of a turn just admitted, unless ``no_progress``."""
        if self._options.no_progress:
            return
        phase = turn.phase or Phase.THINKING
        posted = await self._web.call(
            "chat_postMessage",
            channel=turn.thread.channel,
            thread_ts=turn.thread.ts,
            text=phase.value,
            blocks=status_blocks(phase.value, turn=turn.id, stoppable=True),
        )
        turn.status_ts = str(posted.get("ts", "")) if posted else ""
        # The run may have started while the message was being posted.
        if turn.phase is not phase or turn.writing:
            self._changed(turn)

    def started(self, turn: Turn) -> None:
        """The run took a worker: the status follows its events from now on."""
        turn.pump = asyncio.get_running_loop().create_task(self._pump(turn))
        if turn.phase is not Phase.THINKING:
            turn.emit(STARTED)

    async def caught_up(self, turn: Turn) -> None:
        """Wait until the status took in every event the run emitted so far."""
        await turn.events.join()

    async def stop_following(self, turn: Turn) -> None:
        """The run ended: take in the events it emitted, then no more."""
        if turn.pump is not None:
            turn.events.put_nowait(None)
            with contextlib.suppress(Exception):
                await turn.pump

    async def _pump(self, turn: Turn) -> None:
        while (event := await turn.events.get()) is not None:
            try:
                self._follow_writing(turn, event)
                phase = self._phase(event)
                if isinstance(event, WarningEvent) and event.kind in _PROBLEM_LINE:
                    turn.problems.append(_PROBLEM_LINE[event.kind])
                if isinstance(event, ToolResultEvent) and event.timed_out:
                    turn.problems.append(_TIMED_OUT)
                if phase is not None and phase is not turn.phase:
                    self.show(turn, phase)
            except Exception as error:
                _log.warning("updating a Slack status message failed: %s", error)
            finally:
                turn.events.task_done()
        turn.events.task_done()

    def _phase(self, event: object) -> Phase | None:
        if isinstance(event, Started):
            return Phase.THINKING
        if isinstance(event, ToolCallEvent):
            return _calling(self._tools().get(event.name))
        return None

    def _follow_writing(self, turn: Turn, event: object) -> None:
        """Keep what the status shows of the model's text: the text of its latest call, which
        a retried call voids and the next call replaces."""
        if isinstance(event, TextDeltaEvent):
            if turn.call_ended:
                turn.writing.clear()
                turn.call_ended = False
            turn.writing.append(event.text)
            self._changed(turn)
        elif isinstance(event, StatusEvent):
            if event.phase == StatusPhase.RETRYING:
                turn.writing.clear()
                turn.call_ended = False
                self._changed(turn)
            elif event.phase == StatusPhase.CALLING_LLM:
                turn.call_ended = True

    def show(self, turn: Turn, reached: Phase) -> None:
        """The run reached ``reached``: the status says so, as ``next_phase`` decides."""
        phase = next_phase(turn.phase, reached)
        if phase is turn.phase:
            return
        turn.phase = phase
        self._changed(turn)

    def _changed(self, turn: Turn) -> None:
        if turn.status_ts and not self._options.no_progress:
            turn.edits.changed()

    async def _edit_status(self, turn: Turn) -> None:
        """Edit the status message to show the turn as it stands."""
        line = (turn.phase or Phase.THINKING).value
        writing = "".join(turn.writing)
        blocks = status_blocks(line, turn=turn.id, stoppable=True, writing=writing)
        await self._update(turn.thread.channel, turn.status_ts, line, blocks)()

    def _update(self, channel: str, ts: str, line: str, blocks: list[dict[str, Any]]) -> Edit:
        """The paced edit that makes status message ``ts`` say ``line`` in ``blocks``."""
        return partial(
            self._web.call,
            "chat_update",
            paced=True,
            channel=channel,
            ts=ts,
            text=line,
            blocks=blocks,
        )

    async def report(
        self, turn: Turn, outcome: TurnOutcome, *, setup_changed: bool, draining: bool
    ) -> None:
        """How the turn ended: its answer posted and linked from the status message, or the
        status saying why there is none (``setup_changed`` when the agent's configuration
        changed beyond what the thread carries on across); then the problems met on the way."""
        answer = outcome.answer if isinstance(outcome, Completed | Declined) else ""
        if not answer.strip():
            line = SETUP_CHANGED if setup_changed else ending_line(outcome, draining=draining)
            await self.tell(turn, line)
        else:
            await turn.edits.stop()
            cut, _ = cut_answer(answer)
            posted = await self._web.call(
                "chat_postMessage",
                channel=turn.thread.channel,
                thread_ts=turn.thread.ts,
                text=cut,
                blocks=answer_blocks(cut),
            )
            if posted and turn.status_ts:
                link = await self._web.permalink(turn.thread.channel, str(posted.get("ts", "")))
                line = ending_line(outcome)
                await self._end_status(
                    turn,
                    line,
                    linked_blocks(line, link)
                    if link
                    else status_blocks(line, turn=turn.id, stoppable=False),
                )
        for problem in dict.fromkeys(turn.problems):
            await self._web.post(turn.thread, f":warning: {problem}")

    async def tell(self, turn: Turn, line: str) -> None:
        """The turn's status message says ``line``; without a status message it is posted."""
        if turn.status_ts and not self._options.no_progress:
            await self._end_status(turn, line, status_blocks(line, turn=turn.id, stoppable=False))
        else:
            await self._web.post(turn.thread, line)

    async def _end_status(self, turn: Turn, line: str, blocks: list[dict[str, Any]]) -> None:
        """The status message's last edit: what became of the turn, once the pace allows."""
        await turn.edits.last(self._update(turn.thread.channel, turn.status_ts, line, blocks))

    async def carried_on(self, thread: Thread, status_ts: str) -> None:
        """The status message ``status_ts`` of a turn that ended waiting for an answer, which
        came since, says the thread carried on."""
        blocks = status_blocks(CARRIED_ON, turn="", stoppable=False)
        edits = self._edits(_nothing_to_edit, thread)
        await edits.last(self._update(thread.channel, status_ts, CARRIED_ON, blocks))


def _calling(tool: Tool | None) -> Phase | None:
    """What the status says while the run calls ``tool``, by what kind of tool it is: None for
    one that asks a person, whose question message shows what the run waits for."""
    if tool is None:
        return Phase.CALLING_TOOLS
    if isinstance(tool, AsksOperator) and tool.asks_operator:
        return None
    if isinstance(tool, KnowledgeSearch | KnowledgeEnumerate):
        return Phase.SEARCHING_KNOWLEDGE
    return Phase.CALLING_TOOLS


async def _nothing_to_edit() -> None:
    """The progress of a status message only ever edited once, with its ending."""
