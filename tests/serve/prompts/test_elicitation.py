"""Questions over a2a: an approval put to the caller and answered, given up by silence or a
cancel, refused without asking when the engine does not elicit; an elicit message for a question
nobody asked.

Everything runs over the in-memory transport; every message the engine sends is checked against
the upstream schemas (ours when those are not beside the checkout).
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest

from fisk_ai.a2a.codec import encode
from fisk_ai.a2a.errors import RemoteServiceError
from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import (
    ElicitRequestApprove,
    ElicitWaiting,
    TerminalError,
    TerminalResult,
    new_request,
)
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.a2a.transport import elicit_subject
from fisk_ai.a2a.vocabulary import ErrorCode, StopReason
from fisk_ai.llm.types import ToolResultBlock
from fisk_ai.tools.base import Tool
from fisk_ai.tools.questions import (
    ApprovalChoice,
    ApprovalQuestion,
    DeclineWithReason,
)
from tests.agent.conftest import FakeTool
from tests.fakes.prompter import ScriptedPrompter
from tests.fakes.provider import answer, call, calls
from tests.serve.prompts.engine import (
    CALLER,
    IDENTITY,
    WAIT,
    Agent,
    Held,
    StartAgent,
    client,
    exchange,
    prompt,
)
from tests.serve.prompts.prompters import CancelingPrompter


async def test_an_approval_is_put_to_the_caller_and_answered_once(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(
        app_tools,
        (calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("removed")),
        elicit=True,
    )
    prompter = ScriptedPrompter([ApprovalChoice.ONCE])

    result = await client(caller).ask("remove ORDERS", options=TurnOptions(prompter=prompter))

    assert isinstance(result, TerminalResult) and result.text == "removed"
    [question] = prompter.questions
    assert "ORDERS" in getattr(question, "display", "")


async def test_an_approval_nobody_answers_ends_the_run_suspended(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(
        app_tools,
        (calls(call("t1", "stream_rm", {"stream": "ORDERS"})),),
        elicit=True,
        request_timeout=timedelta(milliseconds=200),
    )

    messages = await exchange(caller, prompt("remove ORDERS"))

    question = next(m for m in messages if isinstance(m, ElicitRequestApprove))
    assert (question.tool_use_id, question.wait_ms) == ("t1", 200)
    result = messages[-1]
    assert isinstance(result, TerminalError)
    assert (result.code, result.stop_reason) == (ErrorCode.SUSPENDED, StopReason.SUSPENDED)


async def test_without_elicit_a_gated_call_is_refused_without_asking(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(
        app_tools, (calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("could not"))
    )

    messages = await exchange(caller, prompt("remove ORDERS"))

    assert not any(isinstance(m, ElicitRequestApprove) for m in messages)
    assert isinstance(messages[-1], TerminalResult) and messages[-1].text == "could not"


async def test_a_cancel_gives_up_the_question_in_flight(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(app_tools, (calls(call("t1", "stream_rm", {"stream": "ORDERS"})),), elicit=True)
    prompter = CancelingPrompter(caller, "r2")

    result = await client(caller).ask(
        "remove", options=TurnOptions(request="r2", prompter=prompter)
    )

    assert isinstance(result, TerminalError) and result.code == ErrorCode.SUSPENDED


async def test_a_waiting_for_a_question_nobody_asked_is_answered_404(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    held = Held()
    await agent((FakeTool("slow", held),), (calls(call("t1", "slow")), answer("done")), elicit=True)
    running = asyncio.create_task(client(caller).ask("go", options=TurnOptions(request="r4")))
    await held.started.wait()
    waiting = new_request(ElicitWaiting, sender=CALLER, request="r4", question_id="nosuch")

    with pytest.raises(RemoteServiceError) as refused:
        await caller.request(elicit_subject(IDENTITY, "r4"), encode(waiting), timeout=WAIT)
    held.release.set()
    await running

    assert refused.value.service_code == 404


def tool_result_read_by_the_model(agent: Agent) -> str:
    [result] = [
        block
        for block in agent.provider.requests[1].messages[-1].content
        if isinstance(block, ToolResultBlock)
    ]
    return result.content


async def test_an_approval_carries_the_argument_vector_to_the_caller(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    hostile = "prod; rm -rf / $(whoami)"
    await agent(
        app_tools,
        (calls(call("t1", "stream_rm", {"stream": hostile})), answer("removed")),
        elicit=True,
    )
    prompter = ScriptedPrompter([ApprovalChoice.ONCE])

    await client(caller).ask("remove it", options=TurnOptions(prompter=prompter))

    [question] = prompter.questions
    assert isinstance(question, ApprovalQuestion)
    assert question.argv == ("stream", "rm", "--", hostile)
    assert question.shell_words()[-1] == f"'{hostile}'"


async def test_a_decline_with_a_sentence_reaches_the_model_over_a2a(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    started = await agent(
        app_tools,
        (calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("staging then")),
        elicit=True,
    )
    prompter = ScriptedPrompter([DeclineWithReason("use the staging cluster")])

    await client(caller).ask("remove ORDERS", options=TurnOptions(prompter=prompter))

    assert json.loads(tool_result_read_by_the_model(started))["reason"] == (
        'the operator declined to run "stream rm -- ORDERS" and said: '
        '"use the staging cluster"; this decision is final, do not retry'
    )


async def test_a_caller_without_an_operator_is_not_reported_as_a_decline(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    started = await agent(
        app_tools,
        (calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("nobody then")),
        elicit=True,
    )
    # An answer that fits no approval is sent as no_operator, as a caller without one sends it.
    prompter = ScriptedPrompter([None])

    await client(caller).ask("remove ORDERS", options=TurnOptions(prompter=prompter))

    assert json.loads(tool_result_read_by_the_model(started))["reason"] == (
        'the caller has no operator to ask, so nobody approved "stream rm -- ORDERS"; '
        "this decision is final, do not retry"
    )


async def test_a_plain_no_as_a_go_peer_sends_it_is_a_decline_without_a_sentence(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    started = await agent(
        app_tools,
        (calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("fine")),
        elicit=True,
    )
    prompter = ScriptedPrompter([ApprovalChoice.NO])

    await client(caller).ask("remove ORDERS", options=TurnOptions(prompter=prompter))

    assert json.loads(tool_result_read_by_the_model(started))["reason"] == (
        'the operator declined to run "stream rm -- ORDERS"; this decision is final, do not retry'
    )
