"""Stopping a terminal's turn the way both surfaces do: the conversation's stop sends the a2a
cancel through the embedded nats-server to the hosted agent, whose model call in flight (the real
anthropic SDK against the local fake Messages API) is cancelled at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.agent.outcome import Completed, RunResult, Suspended
from fisk_ai.agent.resources import ProviderOptions
from fisk_ai.broker.server import locate_server_binary
from fisk_ai.serve.hosted import HostedRun, RunOptions, hosted_run
from fisk_ai.sessions.records import Assistant, ToolResult
from tests.e2e.agent_runs import write_config
from tests.fakes.events import RecordingSink
from tests.fakes.fiskapp import application, command, echoes, logged, runs_of, write_fake_app
from tests.fakes.messages_api import reply, text, tool_use
from tests.fakes.prompter import ScriptedPrompter
from tests.fakes.watched_messages_api import HANG_GUARD, WatchedMessagesAPI

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)


@contextlib.asynccontextmanager
async def hosted(tmp_path: Path, api: WatchedMessagesAPI) -> AsyncIterator[HostedRun]:
    """The workstation's agent: a fake application whose ``status`` is logged, hosted behind
    the embedded broker as an interactive conversation."""
    model = application(
        "ops",
        commands=[command("status", "Show status", action=logged(echoes(), tmp_path / "runs"))],
    )
    config = write_config(tmp_path, application=write_fake_app(tmp_path, model, name="ops"))
    options = RunOptions(
        config=str(config),
        prompt="",
        state_dir=str(tmp_path / "sessions"),
        provider=ProviderOptions(api_key="sk-fake", base_url=api.base_url),
    )
    warnings: list[str] = []
    async with hosted_run(
        options,
        events=RecordingSink(),
        prompter_for=lambda reporter: ScriptedPrompter(),
        warn=warnings.append,
        interactive=True,
    ) as run:
        yield run


async def outcome_of(running: asyncio.Task[RunResult]) -> RunResult:
    return await asyncio.wait_for(running, HANG_GUARD)


async def test_a_stop_ends_the_turn_while_its_model_call_hangs_and_a_follow_up_asks_again(
    tmp_path: Path,
) -> None:
    fake = WatchedMessagesAPI(
        [
            reply(text("never read")),
            reply(tool_use("tu_1", "status", {}), stop_reason="tool_use"),
            reply(text("all well")),
        ]
    )
    with fake:
        fake.hold(1)
        async with hosted(tmp_path, fake) as run:
            conversation, store = run.conversation, run.store
            assert store is not None
            running = asyncio.create_task(conversation.start("how is it going"))
            await fake.arrived()
            await conversation.stop()
            stopped = await outcome_of(running)
            journaled = [record.payload for record in await store.read(stopped.session_id)]

            followed = await outcome_of(asyncio.create_task(conversation.follow_up("go on")))
            records = [record.payload for record in await store.read(stopped.session_id)]

    assert isinstance(stopped.outcome, Suspended)
    assert not [payload for payload in journaled if isinstance(payload, Assistant)]
    assert isinstance(followed.outcome, Completed) and followed.answer == "all well"
    assert runs_of(tmp_path / "runs") == [["status"]]
    assert len([payload for payload in records if isinstance(payload, ToolResult)]) == 1
    assert len(fake.requests) == 3
