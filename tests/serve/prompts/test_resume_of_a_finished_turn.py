"""A plain request.resume continues a turn that stopped part way; one whose last turn is over
(answered, or stopped at the iteration cap) has nothing to carry on, so the worker refuses it
before the ack, with not_started, and calls no model."""

from __future__ import annotations

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import Ack, RequestResume, TerminalError, TerminalResult, new_request
from fisk_ai.a2a.vocabulary import ErrorCode
from fisk_ai.llm.errors import ProviderError
from fisk_ai.tools.base import Tool
from tests.agent.conftest import FakeTool
from tests.fakes.provider import answer, call, calls
from tests.serve.prompts.engine import CALLER, StartAgent, exchange, prompt


def resume_of(ack: Ack) -> RequestResume:
    return new_request(RequestResume, sender=CALLER, conversation_token=ack.conversation_token)


async def test_a_resume_of_an_answered_turn_is_refused_before_the_ack(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started = await agent(replies=(answer("two streams"),))
    first, *_ = await exchange(caller, prompt())
    assert isinstance(first, Ack)

    ack, refusal = await exchange(caller, resume_of(first))

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.NOT_STARTED
    assert "request.read" in refusal.error
    assert started.provider.calls == 1


async def test_a_resume_of_a_turn_stopped_at_the_iteration_cap_is_refused(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    tools: tuple[Tool, ...] = (FakeTool("status"),)
    started = await agent(tools, (calls(call("t1", "status")),))
    first, *_, capped = await exchange(caller, prompt(budget={"max_iterations": 1}))
    assert isinstance(first, Ack) and isinstance(capped, TerminalResult)

    ack, refusal = await exchange(caller, resume_of(first))

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.NOT_STARTED
    assert started.provider.calls == 1


async def test_a_resume_of_a_failed_turn_runs_it_again(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started = await agent(replies=(ProviderError("the endpoint went away"), answer("recovered")))
    first, *_ = await exchange(caller, prompt())
    assert isinstance(first, Ack)

    *_, result = await exchange(caller, resume_of(first))

    assert isinstance(result, TerminalResult) and result.text == "recovered"
    assert started.provider.calls == 2
