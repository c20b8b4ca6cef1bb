"""The answer a caller gives a deferred call over a2a (request.answer) is journaled as that
call's result and reaches the model on the resume past the run's PostToolUse guard, so it is
scanned where it is journaled, under the mode of the server's runs, as a tool's output is."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.a2a.in_process import InProcessBroker, InProcessTransport
from fisk_ai.a2a.messages import Ack, TerminalError, TerminalResult
from fisk_ai.a2a.messages import Answer as LateAnswer
from fisk_ai.a2a.vocabulary import ErrorCode
from fisk_ai.agent.pii import WITHHELD_OUTPUT
from fisk_ai.agent.resources import Resources
from fisk_ai.config.models import PiiMode
from fisk_ai.llm.types import ToolResultBlock
from fisk_ai.serve.prompts import PromptsServer, conversation_session_id
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.fold import fold
from fisk_ai.tools.base import Deferral, ExecDeps, Outcome
from tests.agent.conftest import FakeTool, toolset
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.serve.prompts.engine import IDENTITY, OPTIONS, SETTINGS, client, exchange, prompt

ANSWER = "approved by jane@example.com, card 4111 1111 1111 1111"


@pytest.fixture
async def broker() -> AsyncIterator[InProcessBroker]:
    broker = InProcessBroker()
    yield broker
    await broker.close()


async def _defers(arguments: str, deps: ExecDeps) -> Outcome:
    return Outcome(deferral=Deferral(note="waiting for CAB", handle="CHG-7"))


@dataclasses.dataclass
class Answered:
    provider: ScriptedProvider
    store: FileSessionStore
    session_id: str
    terminal: TerminalResult | TerminalError


async def answered_over_a2a(
    broker: InProcessBroker, tmp_path: Path, mode: PiiMode, value: str
) -> Answered:
    """A served conversation whose run deferred call t1, then the caller's answer ``value``
    to it, under ``mode``."""
    provider = ScriptedProvider([calls(call("t1", "approve_change")), answer("noted")])
    store = FileSessionStore(tmp_path / "runs")
    settings = dataclasses.replace(SETTINGS, pii_mode=mode)
    tools = toolset(FakeTool("approve_change", handler=_defers))
    server = PromptsServer(broker.connect(), Resources(settings, provider, tools, store), OPTIONS)
    await server.start()
    caller: InProcessTransport = broker.connect()
    try:
        ack, *_, deferred = await exchange(caller, prompt("change the retention"))
        assert isinstance(ack, Ack) and ack.conversation_token
        assert isinstance(deferred, TerminalError) and deferred.code == ErrorCode.DEFERRED
        late = LateAnswer.model_validate(
            {"tool_use_id": "t1", "kind": "input", "answer": "value", "value": value}
        )
        terminal = await client(caller).answer(ack.conversation_token, late)
    finally:
        await server.close()
    session_id = conversation_session_id(IDENTITY, ack.conversation_token)
    return Answered(provider, store, session_id, terminal)


async def journaled_result(answered: Answered) -> str:
    conversation = fold(await answered.store.read(answered.session_id))
    (content,) = [
        block.content
        for message in conversation.messages
        for block in message.content
        if isinstance(block, ToolResultBlock) and block.tool_use_id == "t1"
    ]
    return content


def resumed_request(answered: Answered) -> str:
    """What the model was sent when the answer resumed the run."""
    assert answered.provider.calls == 2
    return repr(answered.provider.requests[-1].messages)


def journal_bytes(tmp_path: Path) -> bytes:
    return b"".join(path.read_bytes() for path in (tmp_path / "runs").rglob("*") if path.is_file())


async def test_an_answer_over_a2a_is_journaled_redacted_and_the_model_sees_placeholders(
    broker: InProcessBroker, tmp_path: Path
) -> None:
    answered = await answered_over_a2a(broker, tmp_path, PiiMode.REDACT, ANSWER)

    assert isinstance(answered.terminal, TerminalResult), answered.terminal
    assert answered.terminal.text == "noted"
    stored = await journaled_result(answered)
    assert "[EMAIL-REDACTED]" in stored and "[CREDIT-CARD-REDACTED]" in stored
    assert "jane@example.com" not in stored and "4111" not in stored
    sent = resumed_request(answered)
    assert "[EMAIL-REDACTED]" in sent
    assert "jane@example.com" not in sent and "4111 1111" not in sent
    assert b"jane@example.com" not in journal_bytes(tmp_path)


async def test_reject_withholds_an_answer_over_a2a_from_journal_and_model(
    broker: InProcessBroker, tmp_path: Path
) -> None:
    answered = await answered_over_a2a(broker, tmp_path, PiiMode.REJECT, ANSWER)

    assert isinstance(answered.terminal, TerminalResult), answered.terminal
    assert await journaled_result(answered) == WITHHELD_OUTPUT
    sent = resumed_request(answered)
    assert WITHHELD_OUTPUT in sent and "jane@example.com" not in sent
    assert b"jane@example.com" not in journal_bytes(tmp_path)


async def test_off_passes_an_answer_over_a2a_through_as_given(
    broker: InProcessBroker, tmp_path: Path
) -> None:
    answered = await answered_over_a2a(broker, tmp_path, PiiMode.OFF, ANSWER)

    assert isinstance(answered.terminal, TerminalResult), answered.terminal
    assert "jane@example.com" in await journaled_result(answered)
    assert "jane@example.com" in resumed_request(answered)


async def test_an_answer_with_nothing_to_find_is_journaled_as_given(
    broker: InProcessBroker, tmp_path: Path
) -> None:
    answered = await answered_over_a2a(broker, tmp_path, PiiMode.REDACT, "CAB approved CHG-7")

    assert isinstance(answered.terminal, TerminalResult), answered.terminal
    assert await journaled_result(answered) == '{"value":"CAB approved CHG-7"}'
