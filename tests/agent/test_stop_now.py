"""A stop is heard at once: the model call in flight is cancelled and journaled as nothing, no
tool starts after it, and a tool already running finishes with its result journaled.

The model is the real anthropic SDK against the local fake Messages API, whose reply to a held
request never comes unless the test releases it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence

import pytest

from fisk_ai.agent.outcome import Completed, RunResult, Suspended
from fisk_ai.agent.runner import Runner
from fisk_ai.llm.anthropic import AnthropicProvider
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.records import Assistant, Terminal, TerminalReason, ToolResult
from fisk_ai.tools.base import ExecDeps, Outcome, Tool
from fisk_ai.tools.questions import ApprovalChoice, Prompter, Question
from tests.agent.conftest import FakeTool, make_runner, payloads, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.messages_api import reply, text, tool_use
from tests.fakes.watched_messages_api import HANG_GUARD, WatchedMessagesAPI


@pytest.fixture
def api() -> Iterator[WatchedMessagesAPI]:
    with WatchedMessagesAPI() as fake:
        yield fake


@pytest.fixture
async def provider(api: WatchedMessagesAPI) -> AsyncIterator[AnthropicProvider]:
    model = AnthropicProvider("sk-fake", base_url=api.base_url, max_retries=0)
    yield model
    await model.aclose()


def runner_for(
    provider: AnthropicProvider,
    store: FileSessionStore,
    tools: Sequence[Tool],
    *,
    suspend: asyncio.Event | None = None,
    prompter: Prompter | None = None,
) -> Runner:
    return make_runner(
        provider=provider,
        tools=toolset(*tools),
        store=store,
        events=RecordingSink(),
        suspend=suspend,
        prompter=prompter,
    )


async def outcome_of(running: asyncio.Task[RunResult]) -> RunResult:
    return await asyncio.wait_for(running, HANG_GUARD)


class Blocking:
    """A tool's work that starts, then waits to be let go."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, arguments: str, deps: ExecDeps) -> Outcome:
        self.started.set()
        await self.release.wait()
        return Outcome("finished its work")


async def test_a_stop_cancels_the_model_call_in_flight_and_journals_nothing_for_it(
    api: WatchedMessagesAPI, provider: AnthropicProvider, store: FileSessionStore
) -> None:
    api.script([reply(text("never read"))])
    api.hold(1)
    suspend = asyncio.Event()
    async with runner_for(provider, store, (), suspend=suspend) as runner:
        running = asyncio.create_task(runner.start("go"))
        await api.arrived()
        suspend.set()
        result = await outcome_of(running)
        records = list(await store.read(result.session_id))

    assert isinstance(result.outcome, Suspended)
    assert result.llm_calls == 0
    assert not [payload for payload in payloads(records) if isinstance(payload, Assistant)]
    assert payloads(records)[-1] == Terminal(TerminalReason.SUSPENDED)


async def test_a_resume_after_a_stopped_model_call_asks_again_and_runs_the_tool_once(
    api: WatchedMessagesAPI, provider: AnthropicProvider, store: FileSessionStore
) -> None:
    api.script(
        [
            reply(text("never read")),
            reply(tool_use("tu_1", "work", {}), stop_reason="tool_use"),
            reply(text("done")),
        ]
    )
    api.hold(1)
    work = FakeTool("work")
    suspend = asyncio.Event()
    async with runner_for(provider, store, (work,), suspend=suspend) as runner:
        running = asyncio.create_task(runner.start("go"))
        await api.arrived()
        suspend.set()
        stopped = await outcome_of(running)

    async with runner_for(provider, store, (work,)) as resumed:
        result = await resumed.resume(stopped.session_id)

    assert isinstance(result.outcome, Completed) and result.answer == "done"
    assert len(work.executed) == 1
    assert (result.llm_calls, result.tool_calls) == (2, 1)
    # The stopped request and the one that replaced it sent the same conversation.
    assert api.requests[1]["messages"] == api.requests[0]["messages"]


async def test_a_stop_while_a_tool_runs_lets_it_finish_and_starts_no_later_tool(
    api: WatchedMessagesAPI, provider: AnthropicProvider, store: FileSessionStore
) -> None:
    api.script(
        [
            reply(
                tool_use("tu_1", "slow", {}), tool_use("tu_2", "next", {}), stop_reason="tool_use"
            ),
            reply(text("done")),
        ]
    )
    blocking = Blocking()
    slow, later = FakeTool("slow", blocking), FakeTool("next")
    suspend = asyncio.Event()
    async with runner_for(provider, store, (slow, later), suspend=suspend) as runner:
        running = asyncio.create_task(runner.start("go"))
        await asyncio.wait_for(blocking.started.wait(), HANG_GUARD)
        suspend.set()
        blocking.release.set()
        stopped = await outcome_of(running)
        records = list(await store.read(stopped.session_id))

    results = [payload.result for payload in payloads(records) if isinstance(payload, ToolResult)]
    assert isinstance(stopped.outcome, Suspended)
    assert [(result.tool_use_id, result.content) for result in results] == [
        ("tu_1", "finished its work")
    ]
    assert later.executed == []


async def test_the_call_a_stop_left_unstarted_runs_once_on_resume(
    api: WatchedMessagesAPI, provider: AnthropicProvider, store: FileSessionStore
) -> None:
    api.script(
        [
            reply(
                tool_use("tu_1", "slow", {}), tool_use("tu_2", "next", {}), stop_reason="tool_use"
            ),
            reply(text("done")),
        ]
    )
    blocking = Blocking()
    slow, later = FakeTool("slow", blocking), FakeTool("next")
    suspend = asyncio.Event()
    async with runner_for(provider, store, (slow, later), suspend=suspend) as runner:
        running = asyncio.create_task(runner.start("go"))
        await asyncio.wait_for(blocking.started.wait(), HANG_GUARD)
        suspend.set()
        blocking.release.set()
        stopped = await outcome_of(running)

    async with runner_for(provider, store, (slow, later)) as resumed:
        result = await resumed.resume(stopped.session_id)

    assert result.answer == "done"
    assert (len(slow.executed), len(later.executed)) == (1, 1)
    assert len(api.requests) == 2


class ApprovesThenStops:
    """An operator who answers Once just as a stop is asked."""

    def __init__(self, suspend: asyncio.Event) -> None:
        self._suspend = suspend
        self.questions: list[Question] = []

    def can_prompt(self) -> bool:
        return True

    async def ask(self, question: Question) -> ApprovalChoice:
        self.questions.append(question)
        self._suspend.set()
        return ApprovalChoice.ONCE


async def test_a_call_approved_as_the_stop_came_does_not_start(
    api: WatchedMessagesAPI,
    provider: AnthropicProvider,
    store: FileSessionStore,
    app_tools: tuple[Tool, ...],
) -> None:
    api.script([reply(tool_use("tu_1", "stream_rm", {"stream": "ORDERS"}), stop_reason="tool_use")])
    suspend = asyncio.Event()
    prompter = ApprovesThenStops(suspend)
    async with runner_for(provider, store, app_tools, suspend=suspend, prompter=prompter) as runner:
        stopped = await outcome_of(asyncio.create_task(runner.start("go")))
        records = list(await store.read(stopped.session_id))

    assert len(prompter.questions) == 1
    assert isinstance(stopped.outcome, Suspended)
    assert not [payload for payload in payloads(records) if isinstance(payload, ToolResult)]


async def test_cancelling_the_run_during_a_model_call_abandons_it_rather_than_suspend(
    api: WatchedMessagesAPI, provider: AnthropicProvider, store: FileSessionStore
) -> None:
    api.script([reply(text("never read"))])
    api.hold(1)
    async with runner_for(provider, store, ()) as runner:
        running = asyncio.create_task(runner.start("go"))
        await api.arrived()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(running, HANG_GUARD)
        session_id = runner.session_id
        records = list(await store.read(session_id))

    assert not [payload for payload in payloads(records) if isinstance(payload, Terminal)]
