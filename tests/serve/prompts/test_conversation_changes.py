"""A served conversation across a redeploy and across the budgets its callers send: a changed
tool set or a lowered budget does not end it, a changed model does (answered ``failed``, with
advice a remote caller can follow), and its token allowance is measured over the whole
conversation."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

import pytest

from fisk_ai.a2a.in_process import InProcessBroker, InProcessTransport
from fisk_ai.a2a.messages import Ack, Budget, TerminalError, TerminalResult
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.a2a.vocabulary import ErrorCode, StopReason
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.serve.prompts import LOCAL, SERVED, ConversationNaming, PromptsServer
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tools.base import Tool
from tests.agent.conftest import FakeTool, toolset
from tests.fakes.provider import Reply, ScriptedProvider, answer
from tests.serve.prompts.engine import OPTIONS, SETTINGS, client, exchange, prompt

TOKENS_PER_ANSWER = 20
"""What one scripted answer processes: 10 tokens in, 10 out."""


class Deploy(Protocol):
    async def __call__(
        self,
        *replies: Reply,
        tools: tuple[Tool, ...] = (),
        settings: AgentSettings = SETTINGS,
        naming: ConversationNaming = SERVED,
    ) -> None: ...


@pytest.fixture
async def deploy(broker: InProcessBroker, tmp_path: Path) -> AsyncIterator[Deploy]:
    """Start the agent over one session store, replacing the one running before, as a
    redeploy of the worker does."""
    running: list[PromptsServer] = []
    store = FileSessionStore(tmp_path / "runs")

    async def start(
        *replies: Reply,
        tools: tuple[Tool, ...] = (),
        settings: AgentSettings = SETTINGS,
        naming: ConversationNaming = SERVED,
    ) -> None:
        if running:
            await running.pop().close()
        server = PromptsServer(
            broker.connect(),
            Resources(settings, ScriptedProvider(replies), toolset(*tools), store),
            dataclasses.replace(OPTIONS, naming=naming),
        )
        await server.start()
        running.append(server)

    yield start
    for server in running:
        await server.close()


async def first_turn(caller: InProcessTransport, budget: Budget | None = None) -> str:
    """Ask the conversation's first prompt; its token."""
    acks: list[Ack] = []
    result = await client(caller).ask(
        "how many streams",
        options=TurnOptions(on_ack=acks.append, budget=budget),
    )
    assert isinstance(result, TerminalResult)
    assert acks[0].conversation_token
    return acks[0].conversation_token


async def test_a_follow_up_after_the_tool_set_changed_runs(
    deploy: Deploy, caller: InProcessTransport
) -> None:
    await deploy(answer("two streams"), tools=(FakeTool("slow"),))
    token = await first_turn(caller)
    await deploy(answer("still two"), tools=(FakeTool("slow"), FakeTool("fast")))

    result = await client(caller).ask("and now", token=token)

    assert isinstance(result, TerminalResult) and result.text == "still two"


async def test_a_terminals_own_run_across_a_changed_tool_set_needs_its_operators_force(
    deploy: Deploy, caller: InProcessTransport
) -> None:
    await deploy(answer("two streams"), tools=(FakeTool("slow"),), naming=LOCAL)
    token = await first_turn(caller)
    await deploy(tools=(FakeTool("slow"), FakeTool("fast")), naming=LOCAL)

    result = await client(caller).ask("and now", token=token)

    assert isinstance(result, TerminalError) and result.code == ErrorCode.NOT_STARTED
    assert "(tool set: changed); restore it, or pass --force" in result.error


async def test_a_follow_up_after_the_model_changed_fails_with_advice_for_the_wire(
    deploy: Deploy, caller: InProcessTransport
) -> None:
    await deploy(answer("two streams"))
    token = await first_turn(caller)
    await deploy(settings=dataclasses.replace(SETTINGS, model="other-model"))

    result = await client(caller).ask("and now", token=token)

    assert isinstance(result, TerminalError)
    assert (result.code, result.stop_reason) == (ErrorCode.FAILED, StopReason.ERROR)
    assert "model: test-model -> other-model" in result.error
    assert result.error.endswith("start a new conversation, or send the request with force: true")
    assert "--force" not in result.error


async def test_a_forced_follow_up_after_the_model_changed_runs(
    deploy: Deploy, caller: InProcessTransport
) -> None:
    await deploy(answer("two streams"))
    token = await first_turn(caller)
    await deploy(answer("still two"), settings=dataclasses.replace(SETTINGS, model="other-model"))

    result = await client(caller).ask("and now", token=token, options=TurnOptions(force=True))

    assert isinstance(result, TerminalResult) and result.text == "still two"


async def test_a_follow_up_with_a_lowered_budget_runs(
    deploy: Deploy, caller: InProcessTransport
) -> None:
    await deploy(answer("two streams"), answer("still two"))
    token = await first_turn(caller)

    lowered = TurnOptions(budget=Budget(max_tokens=5_000, max_iterations=5))
    result = await client(caller).ask("and now", token=token, options=lowered)

    assert isinstance(result, TerminalResult) and result.text == "still two"


async def test_a_budget_below_what_the_conversation_used_is_refused_budget_exhausted(
    deploy: Deploy, caller: InProcessTransport
) -> None:
    await deploy(answer("two streams"))
    token = await first_turn(caller)

    replies = await exchange(
        caller,
        prompt("and now", conversation_token=token, budget=Budget(max_tokens=TOKENS_PER_ANSWER)),
    )

    ack, terminal = replies
    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(terminal, TerminalError) and terminal.code == ErrorCode.BUDGET_EXHAUSTED


async def test_a_budget_given_with_the_first_prompt_limits_every_later_turn(
    deploy: Deploy, caller: InProcessTransport
) -> None:
    await deploy(answer("two streams"), answer("still two"))
    token = await first_turn(caller, budget=Budget(max_tokens=TOKENS_PER_ANSWER + 10))
    second = await client(caller).ask("and now", token=token)
    assert isinstance(second, TerminalResult)

    third = await client(caller).ask("and again", token=token)

    assert isinstance(third, TerminalError) and third.code == ErrorCode.BUDGET_EXHAUSTED
