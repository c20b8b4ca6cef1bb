"""The PII guard is the run's own, so a prompt that arrives over a2a is scanned as a local one
is: what the model and the journal see is redacted, or the prompt is refused."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.a2a.in_process import InProcessBroker
from fisk_ai.a2a.messages import TerminalError, TerminalResult
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.config.models import PiiMode
from fisk_ai.serve.prompts import PromptsServer
from fisk_ai.sessions.file import FileSessionStore
from tests.agent.conftest import toolset
from tests.fakes.provider import ScriptedProvider, answer
from tests.serve.prompts.engine import OPTIONS, SETTINGS, exchange, prompt


@pytest.fixture
async def broker() -> AsyncIterator[InProcessBroker]:
    broker = InProcessBroker()
    yield broker
    await broker.close()


async def served_exchange(
    broker: InProcessBroker, store: FileSessionStore, settings: AgentSettings, text: str
) -> tuple[ScriptedProvider, TerminalResult | TerminalError]:
    provider = ScriptedProvider([answer("noted")])
    server = PromptsServer(
        broker.connect(), Resources(settings, provider, toolset(), store), OPTIONS
    )
    await server.start()
    try:
        *_, terminal = await exchange(broker.connect(), prompt(text))
    finally:
        await server.close()
    assert isinstance(terminal, TerminalResult | TerminalError)
    return provider, terminal


async def test_a_served_prompt_reaches_the_model_and_the_journal_redacted(
    broker: InProcessBroker, tmp_path: Path
) -> None:
    store = FileSessionStore(tmp_path / "runs")
    provider, terminal = await served_exchange(
        broker, store, SETTINGS, "write to jane@example.com about card 4111 1111 1111 1111"
    )

    assert isinstance(terminal, TerminalResult), terminal
    sent = repr(provider.requests[0].messages)
    assert "jane@example.com" not in sent
    assert "[EMAIL-REDACTED]" in sent
    assert "[CREDIT-CARD-REDACTED]" in sent
    (summary,) = await store.list()
    assert summary.first_prompt == "write to [EMAIL-REDACTED] about card [CREDIT-CARD-REDACTED]"
    stored = [path.read_bytes() for path in (tmp_path / "runs").iterdir() if path.is_file()]
    assert stored
    assert not any(b"jane@example.com" in data for data in stored)


async def test_reject_refuses_a_served_prompt_without_asking_the_model(
    broker: InProcessBroker, tmp_path: Path
) -> None:
    settings = dataclasses.replace(SETTINGS, pii_mode=PiiMode.REJECT)
    provider, terminal = await served_exchange(
        broker, FileSessionStore(tmp_path / "runs"), settings, "my ssn is 123-45-6789"
    )

    assert isinstance(terminal, TerminalError), terminal
    assert provider.calls == 0
