"""The Server over an in-memory channel: slots, budgets, prompters, reporting and shutdown."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from fisk_ai.agent.outcome import Abandoned, Completed, Crashed, IterationsSpent, RunResult
from fisk_ai.agent.resources import Resources
from fisk_ai.errors import FiskError
from fisk_ai.llm.types import Request, Response, ToolResultBlock
from fisk_ai.serve.server import (
    Channel,
    RequestedLimits,
    Server,
    Work,
    WorkKind,
    lowered,
)
from fisk_ai.sessions.file import FileJournal, FileSessionStore
from fisk_ai.sessions.fold import fold
from fisk_ai.sessions.records import Payload, Record, Terminal, TerminalReason
from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.base import Outcome as ToolOutcome
from fisk_ai.tools.questions import ApprovalChoice, Prompter
from fisk_ai.tools.toolset import ToolSet
from fisk_ai.util.ids import new_ksuid
from tests.agent.conftest import SETTINGS, FakeTool, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.prompter import ScriptedPrompter
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.patience import DEADLINE

Offer = Work | Exception | None


class QueueChannel:
    """A channel handing over the work offered to it, in order. An offered exception is raised
    from ``next``, as a channel whose transport broke would."""

    def __init__(self, name: str = "queue") -> None:
        self.name = name
        self.closed = asyncio.Event()
        self.handed: asyncio.Queue[Work] = asyncio.Queue()
        self._offered: asyncio.Queue[Offer] = asyncio.Queue()

    def offer(self, *offers: Offer) -> None:
        for offer in offers:
            self._offered.put_nowait(offer)

    async def next(self) -> Work | None:
        offer = await self._offered.get()
        if offer is None:
            self._offered.put_nowait(None)
            return None
        if isinstance(offer, Exception):
            raise offer
        self.handed.put_nowait(offer)
        return offer

    async def close(self) -> None:
        self.closed.set()
        self._offered.put_nowait(None)


@dataclass(eq=False)
class Job:
    """One piece of work and what the server told it."""

    prompt: str = "go"
    results: list[RunResult] = field(default_factory=list)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    runs_begun: int = 0
    begun: asyncio.Event = field(default_factory=asyncio.Event)
    calls_before_run: list[int] = field(default_factory=list)
    sink: RecordingSink = field(default_factory=RecordingSink)
    provider: ScriptedProvider | None = None

    def work(
        self, *, budget: RequestedLimits | None = None, prompter: Prompter | None = None
    ) -> Work:
        return Work(
            kind=WorkKind.START,
            session_id=new_ksuid(),
            done=self._done,
            events=self.sink,
            prompt=self.prompt,
            budget=budget,
            prompter=prompter,
            run_context=self._begin,
        )

    @property
    def result(self) -> RunResult:
        [result] = self.results
        return result

    def _begin(self) -> None:
        self.runs_begun += 1
        if self.provider is not None:
            self.calls_before_run.append(self.provider.calls)
        self.begun.set()

    async def _done(self, result: RunResult) -> None:
        self.results.append(result)
        self.finished.set()


@dataclass(eq=False)
class Gate:
    """A tool call that runs until the test opens the gate; counts the calls inside it."""

    inside: int = 0
    peak: int = 0
    entered: asyncio.Queue[None] = field(default_factory=asyncio.Queue)
    opened: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, arguments: str, deps: ExecDeps) -> ToolOutcome:
        self.inside += 1
        self.peak = max(self.peak, self.inside)
        self.entered.put_nowait(None)
        try:
            await self.opened.wait()
        finally:
            self.inside -= 1
        return ToolOutcome("opened")


def call_then_answer(request: Request) -> Response:
    """One turn of any conversation: call the tool, then answer once it has a result."""
    last = request.messages[-1]
    if any(isinstance(block, ToolResultBlock) for block in last.content):
        return answer("done")
    return calls(call("t1", "slow"))


@dataclass
class Serving:
    server: Server
    task: asyncio.Task[None]
    provider: ScriptedProvider


StartServer = Callable[..., Serving]


@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[StartServer]:
    started: list[Serving] = []

    def start(
        channels: Sequence[tuple[Channel, int]],
        *,
        replies: Sequence[Any] = (),
        tools: ToolSet | Callable[[], ToolSet] | None = None,
    ) -> Serving:
        provider = ScriptedProvider(replies)
        resources = Resources(
            SETTINGS,
            provider,
            tools if tools is not None else toolset(),
            FileSessionStore(tmp_path / "runs"),
        )
        server = Server(resources, channels)
        serving = Serving(server, asyncio.create_task(server.serve()), provider)
        started.append(serving)
        return serving

    yield start
    for serving in started:
        await serving.server.stop()
        await asyncio.gather(serving.task, return_exceptions=True)


async def test_work_is_taken_before_a_slot_is_free_and_runs_once_one_is(
    serve: StartServer,
) -> None:
    gate = Gate()
    channel = QueueChannel()
    serving = serve(
        [(channel, 1)], replies=[call_then_answer] * 4, tools=toolset(FakeTool("slow", gate))
    )
    first, second = Job(), Job()
    channel.offer(first.work(), second.work())

    await gate.entered.get()
    await channel.handed.get()
    await channel.handed.get()
    waited = second.runs_begun
    gate.opened.set()
    await second.finished.wait()

    assert waited == 0
    assert first.result.answer == "done"
    assert second.result.answer == "done"
    assert serving.server.running == 0


async def test_a_channel_runs_no_more_turns_at_once_than_its_slots(serve: StartServer) -> None:
    gate = Gate()
    channel = QueueChannel()
    serve([(channel, 2)], replies=[call_then_answer] * 6, tools=toolset(FakeTool("slow", gate)))
    jobs = [Job(), Job(), Job()]
    channel.offer(*(job.work() for job in jobs))

    await gate.entered.get()
    await gate.entered.get()
    for _ in jobs:
        await channel.handed.get()
    third_begun = jobs[2].runs_begun
    gate.opened.set()
    for job in jobs:
        await job.finished.wait()

    assert third_begun == 0
    assert gate.peak == 2
    assert all(isinstance(job.result.outcome, Completed) for job in jobs)


async def test_each_channel_has_its_own_slots(serve: StartServer) -> None:
    gate = Gate()
    busy, other = QueueChannel("busy"), QueueChannel("other")
    serve(
        [(busy, 1), (other, 1)],
        replies=[call_then_answer] * 4,
        tools=toolset(FakeTool("slow", gate)),
    )
    held, free = Job(), Job()
    busy.offer(held.work())
    await gate.entered.get()

    other.offer(free.work())
    await gate.entered.get()
    gate.opened.set()
    await held.finished.wait()
    await free.finished.wait()

    assert gate.peak == 2


def test_a_budget_lowers_the_limits_and_never_raises_them() -> None:
    settings = dataclasses.replace(
        SETTINGS, max_tokens=100_000, max_iterations=10, tool_timeout=timedelta(minutes=5)
    )

    lower = lowered(settings, RequestedLimits(max_tokens=1_000, max_iterations=2))
    higher = lowered(settings, RequestedLimits(max_tokens=900_000, max_iterations=90))

    assert (lower.max_tokens, lower.max_iterations) == (1_000, 2)
    assert (higher.max_tokens, higher.max_iterations) == (100_000, 10)
    assert lower.tool_timeout == higher.tool_timeout == timedelta(minutes=5)


async def test_single_turn_work_ends_its_journal_completed_under_interactive_settings(
    tmp_path: Path,
) -> None:
    # Served prompts make the shared settings interactive; a queued job shares them.
    store = FileSessionStore(tmp_path / "runs")
    resources = Resources(
        dataclasses.replace(SETTINGS, interactive=True),
        ScriptedProvider([answer("ORDERS has none"), answer("the fleet is green")]),
        toolset(),
        store,
    )
    channel = QueueChannel()
    server = Server(resources, [(channel, 1)])
    serving = asyncio.create_task(server.serve())
    job, prompt = Job(), Job()
    job_work = dataclasses.replace(job.work(), single_turn=True)
    prompt_work = prompt.work()
    try:
        channel.offer(job_work)
        await job.finished.wait()
        channel.offer(prompt_work)
        await prompt.finished.wait()
    finally:
        await server.stop()
        await asyncio.gather(serving, return_exceptions=True)

    job_terminal = fold(await store.read(job_work.session_id)).terminal
    prompt_terminal = fold(await store.read(prompt_work.session_id)).terminal
    assert job_terminal is not None and job_terminal.reason is TerminalReason.COMPLETED
    # The prompt's conversation stays open for its next turn.
    assert prompt_terminal is not None and prompt_terminal.reason is TerminalReason.SUSPENDED


async def test_a_stop_while_an_ended_turn_closes_its_journal_waits_for_the_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An interactive turn's runner journals the conversation as resting when it closes. A stop
    # arriving just then used to cancel that write: the work was never reported done and the
    # stop waited for it forever.
    resting, released = asyncio.Event(), asyncio.Event()
    append = FileJournal.append

    async def held_rest(
        journal: FileJournal, payload: Payload, *, optional: bool = False
    ) -> Record:
        if isinstance(payload, Terminal):
            resting.set()
            await released.wait()
        return await append(journal, payload, optional=optional)

    monkeypatch.setattr(FileJournal, "append", held_rest)
    stopping: asyncio.Task[None] | None = None
    wait_idle = Server.wait_idle

    async def stop_waiting(server: Server) -> None:
        # The stop has cancelled what it cancels once it waits for the work to be reported.
        if asyncio.current_task() is stopping:
            released.set()
        await wait_idle(server)

    monkeypatch.setattr(Server, "wait_idle", stop_waiting)
    store = FileSessionStore(tmp_path / "runs")
    resources = Resources(
        dataclasses.replace(SETTINGS, interactive=True),
        ScriptedProvider([answer("ORDERS has none")]),
        toolset(),
        store,
    )
    channel = QueueChannel()
    server = Server(resources, [(channel, 1)])
    serving = asyncio.create_task(server.serve())
    job = Job()
    work = job.work()
    channel.offer(work)
    async with asyncio.timeout(DEADLINE):
        await resting.wait()
        stopping = asyncio.create_task(server.stop())
        await stopping
        await serving

    assert job.result.answer == "ORDERS has none"
    terminal = fold(await store.read(work.session_id)).terminal
    assert terminal is not None and terminal.reason is TerminalReason.SUSPENDED


async def test_a_budget_on_the_work_limits_its_run(serve: StartServer) -> None:
    channel = QueueChannel()
    serve(
        [(channel, 1)],
        replies=[calls(call("t1", "quick")), calls(call("t2", "quick"))],
        tools=toolset(FakeTool("quick")),
    )
    job = Job()

    channel.offer(job.work(budget=RequestedLimits(max_iterations=1)))
    await job.finished.wait()

    assert isinstance(job.result.outcome, IterationsSpent)


@dataclass(eq=False)
class GatedTool(FakeTool):
    """A tool every call of which needs an operator's approval."""

    def confirm_trigger(self, confirm_tags: Sequence[str]) -> str | None:
        return "ai:confirm"


async def test_work_without_a_prompter_has_its_gated_calls_refused(serve: StartServer) -> None:
    gated = GatedTool("purge")
    channel = QueueChannel()
    serve(
        [(channel, 1)],
        replies=[calls(call("t1", "purge")), answer("could not purge")],
        tools=toolset(gated),
    )
    job = Job()

    channel.offer(job.work(prompter=None))
    await job.finished.wait()

    assert gated.executed == []
    assert job.result.answer == "could not purge"


async def test_work_with_a_prompter_has_its_gated_calls_asked(serve: StartServer) -> None:
    gated = GatedTool("purge")
    channel = QueueChannel()
    serve(
        [(channel, 1)],
        replies=[calls(call("t1", "purge")), answer("purged")],
        tools=toolset(gated),
    )
    prompter = ScriptedPrompter([ApprovalChoice.ONCE])
    job = Job()

    channel.offer(job.work(prompter=prompter))
    await job.finished.wait()

    assert len(prompter.questions) == 1
    assert len(gated.executed) == 1


async def test_run_context_is_called_once_just_before_the_run(serve: StartServer) -> None:
    channel = QueueChannel()
    serving = serve([(channel, 1)], replies=[answer("hi")])
    job = Job(provider=serving.provider)

    channel.offer(job.work())
    await job.finished.wait()

    assert job.runs_begun == 1
    assert job.calls_before_run == [0]
    assert serving.provider.calls == 1


async def test_completed_work_is_reported_once_with_its_result(serve: StartServer) -> None:
    channel = QueueChannel()
    serving = serve([(channel, 1)], replies=[answer("hello")])
    job = Job()

    channel.offer(job.work())
    await job.finished.wait()
    await channel.close()
    await serving.task

    assert job.result.outcome == Completed("hello")


async def test_a_crashed_run_is_reported_once_as_crashed(serve: StartServer) -> None:
    def broken_tools() -> ToolSet:
        raise RuntimeError("the tool set is gone")

    channel = QueueChannel()
    serving = serve([(channel, 1)], tools=broken_tools)
    job = Job()

    channel.offer(job.work())
    await job.finished.wait()
    await channel.close()
    await serving.task

    assert isinstance(job.result.outcome, Crashed)


async def test_stop_cancels_running_work_and_reports_it_abandoned(serve: StartServer) -> None:
    gate = Gate()
    channel = QueueChannel()
    serving = serve(
        [(channel, 1)], replies=[call_then_answer], tools=toolset(FakeTool("slow", gate))
    )
    job = Job()
    channel.offer(job.work())
    await gate.entered.get()

    await serving.server.stop()
    await serving.task

    assert isinstance(job.result.outcome, Abandoned)
    assert channel.closed.is_set()


async def test_work_waiting_for_a_slot_at_a_stop_is_reported_abandoned_unstarted(
    serve: StartServer,
) -> None:
    gate = Gate()
    channel = QueueChannel()
    serving = serve(
        [(channel, 1)], replies=[call_then_answer], tools=toolset(FakeTool("slow", gate))
    )
    running, waiting = Job(), Job()
    channel.offer(running.work(), waiting.work())
    await gate.entered.get()
    await channel.handed.get()
    await channel.handed.get()

    await serving.server.stop()
    await serving.task

    assert isinstance(waiting.result.outcome, Abandoned) and waiting.runs_begun == 0
    assert isinstance(running.result.outcome, Abandoned)


async def test_a_drain_lets_running_work_finish_and_takes_no_more(serve: StartServer) -> None:
    gate = Gate()
    channel = QueueChannel()
    serving = serve(
        [(channel, 1)], replies=[call_then_answer] * 2, tools=toolset(FakeTool("slow", gate))
    )
    job = Job()
    channel.offer(job.work())
    await gate.entered.get()

    await serving.server.drain()
    still_serving = not serving.task.done()
    gate.opened.set()
    await serving.task

    assert channel.closed.is_set() and still_serving
    assert job.result.answer == "done"


async def test_a_faulting_channel_drains_the_server_and_serve_raises(
    serve: StartServer,
) -> None:
    gate = Gate()
    healthy, broken = QueueChannel("healthy"), QueueChannel("broken")
    serving = serve(
        [(healthy, 1), (broken, 1)],
        replies=[call_then_answer] * 2,
        tools=toolset(FakeTool("slow", gate)),
    )
    job = Job()
    healthy.offer(job.work())
    await gate.entered.get()

    broken.offer(ConnectionError("the transport went away"))
    await healthy.closed.wait()
    gate.opened.set()

    with pytest.raises(ConnectionError):
        await serving.task
    assert job.result.answer == "done"


@dataclass
class ServerEndpoint:
    """A Server as the command drives it."""

    server: Server
    identity: str = "ops"

    async def drain(self) -> None:
        await self.server.drain()

    async def close(self) -> None:
        await self.server.stop()


@dataclass
class SteadyTransport:
    """A transport that never faults."""

    fault: asyncio.Future[str] | None = None


async def test_the_command_drains_and_fails_when_a_channel_faults(serve: StartServer) -> None:
    from fisk_ai.a2a.nats import NatsTransport
    from fisk_ai.serve.draining import serve_until_stopped

    channel = QueueChannel()
    serving = serve([(channel, 1)])
    channel.offer(ConnectionError("the queue went away"))

    with pytest.raises(FiskError, match=r"failed \(the queue went away\) and was drained"):
        await serve_until_stopped(
            ServerEndpoint(serving.server),
            cast(NatsTransport, SteadyTransport()),
            serving=serving.task,
        )
    assert channel.closed.is_set()
