"""The agent a terminal hosts for itself: behind the embedded broker, or in memory without one."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.agent.outcome import Completed
from fisk_ai.agent.resources import ProviderOptions
from fisk_ai.broker.server import locate_server_binary
from fisk_ai.config import Mode, load
from fisk_ai.serve.hosted import RunOptions
from fisk_ai.serve.local import NO_BROKER_NOTICE, LocalAgent, host_local_agent
from tests.fakes.events import RecordingSink
from tests.fakes.prompter import ScriptedPrompter

COWSAY = Path(__file__).resolve().parents[2] / "examples" / "cowsay"
PUNCHLINE = "Udderly out of this world."


@contextlib.asynccontextmanager
async def cowsay_hosted(tmp_path: Path, warnings: list[str]) -> AsyncIterator[LocalAgent]:
    """The cowsay example hosted here, answering from its recorded cassette."""
    cfg = load(COWSAY / "agent.yaml", Mode.AGENT)
    async with host_local_agent(
        cfg,
        RunOptions(
            config=str(COWSAY / "agent.yaml"),
            prompt="",
            provider=ProviderOptions(replay=str(COWSAY / "joke.cassette")),
            state_dir=str(tmp_path / "sessions"),
        ),
        interactive=False,
        elicit=False,
        warn=warnings.append,
    ) as agent:
        yield agent


async def ask_for_a_joke(agent: LocalAgent) -> tuple[str, str]:
    conversation = agent.endpoint.conversation(events=RecordingSink(), prompter=ScriptedPrompter())
    result = await conversation.start("tell me a joke")
    assert isinstance(result.outcome, Completed), result.message
    return result.answer, result.session_id


@pytest.mark.skipif(locate_server_binary() is None, reason="no nats-server binary here")
async def test_the_turn_goes_through_the_embedded_broker_and_is_journaled(tmp_path: Path) -> None:
    warnings: list[str] = []
    async with cowsay_hosted(tmp_path, warnings) as agent:
        answer, session = await ask_for_a_joke(agent)

        assert isinstance(agent.endpoint.transport, NatsTransport)
        assert PUNCHLINE in answer
        assert [summary.run_id for summary in await agent.store.list()] == [session]
    assert warnings == []


async def test_without_a_server_binary_the_turn_goes_through_memory_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("fisk_ai.broker.server.locate_server_binary", lambda: None)
    warnings: list[str] = []
    async with cowsay_hosted(tmp_path, warnings) as agent:
        answer, _ = await ask_for_a_joke(agent)

        assert isinstance(agent.endpoint.transport, InProcessTransport)
        assert PUNCHLINE in answer
    assert warnings == [NO_BROKER_NOTICE]
