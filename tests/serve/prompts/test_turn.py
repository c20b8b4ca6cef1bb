"""The end of a turn and the wait before it: keepalives while a run is quiet, and the terminal
message every running turn gets when the engine closes."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import (
    EventMessage,
    EventStatus,
    TerminalError,
    TerminalResult,
    UnknownEvent,
)
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.a2a.vocabulary import ErrorCode
from fisk_ai.agent.events import StatusPhase
from tests.agent.conftest import FakeTool
from tests.fakes.provider import answer, call, calls
from tests.serve.prompts.engine import Held, StartAgent, client


async def test_a_quiet_run_sends_keepalive_statuses(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    held = Held()
    await agent(
        (FakeTool("slow", held),),
        (calls(call("t1", "slow")), answer("done")),
        keepalive_interval=timedelta(milliseconds=20),
    )
    kept_alive = asyncio.Event()

    def watch(event: EventMessage | UnknownEvent) -> None:
        if isinstance(event, EventStatus) and event.block.phase == StatusPhase.WORKING:
            kept_alive.set()
            held.release.set()

    result = await client(caller).ask("go", options=TurnOptions(on_event=watch))

    assert kept_alive.is_set()
    assert isinstance(result, TerminalResult) and result.text == "done"


async def test_closing_the_engine_answers_the_running_turn_failed(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    held = Held()
    started = await agent((FakeTool("slow", held),), (calls(call("t1", "slow")),))
    running = asyncio.create_task(client(caller).ask("go"))
    await held.started.wait()

    await started.server.close()
    result = await running

    assert isinstance(result, TerminalError) and result.code == ErrorCode.FAILED
