"""Answering a call after its run ended: a deferred call takes the answer as its result, a
question nobody answered in time waits for one, an approval given late runs the call when the run
asks again; and the answers refused before the ack.

Everything runs over the in-memory transport; every message the engine sends is checked against
the upstream schemas (ours when those are not beside the checkout) as it arrives.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import Ack, RequestAnswer, TerminalError, TerminalResult, new_request
from fisk_ai.a2a.messages import Answer as LateAnswer
from fisk_ai.a2a.vocabulary import ErrorCode, StopReason
from fisk_ai.llm.types import Role, ToolResultBlock
from fisk_ai.serve.prompts import conversation_session_id
from fisk_ai.sessions.fold import fold
from fisk_ai.tools.base import Deferral, ExecDeps, Outcome
from fisk_ai.tools.builtin.hitl import ASK_HUMAN_CONFIRM, AskHumanConfirm
from tests.agent.conftest import FakeTool
from tests.fakes.provider import answer, call, calls
from tests.serve.prompts.engine import (
    CALLER,
    IDENTITY,
    Agent,
    StartAgent,
    client,
    exchange,
    prompt,
)


async def _defers(arguments: str, deps: ExecDeps) -> Outcome:
    return Outcome(deferral=Deferral(note="waiting for CAB", handle="CHG-7"))


@dataclass(eq=False)
class GatedTool(FakeTool):
    """An in-process tool every call of which needs an approval."""

    def confirm_trigger(self, confirm_tags: Sequence[str]) -> str | None:
        return "ai:confirm"


def late(tool_use_id: str, kind: str, field: str, **decision: Any) -> LateAnswer:
    return LateAnswer.model_validate(
        {"tool_use_id": tool_use_id, "kind": kind, "answer": field, **decision}
    )


def answer_request(token: str, answer: LateAnswer) -> RequestAnswer:
    return new_request(RequestAnswer, sender=CALLER, conversation_token=token, answer=answer)


async def deferred_conversation(agent: StartAgent, caller: InProcessTransport) -> tuple[Agent, str]:
    """A conversation whose run ended waiting on deferred call t1, with one reply left."""
    started = await agent(
        (FakeTool("approve_change", handler=_defers),),
        (calls(call("t1", "approve_change")), answer("the change is approved")),
    )
    ack, *_, ended = await exchange(caller, prompt("change the retention"))
    assert isinstance(ack, Ack) and ack.conversation_token
    assert isinstance(ended, TerminalError) and ended.code == ErrorCode.DEFERRED
    return started, ack.conversation_token


async def suspended_approval(
    agent: StartAgent, caller: InProcessTransport, tool: FakeTool
) -> tuple[Agent, str]:
    """A conversation whose run ended suspended on the unanswered approval of call t1."""
    started = await agent(
        (tool,),
        (calls(call("t1", tool.name)), answer("finished")),
        elicit=True,
        request_timeout=timedelta(milliseconds=100),
    )
    ack, *_, ended = await exchange(caller, prompt("remove ORDERS"))
    assert isinstance(ack, Ack) and ack.conversation_token
    assert isinstance(ended, TerminalError) and ended.code == ErrorCode.SUSPENDED
    return started, ack.conversation_token


async def test_an_answer_to_a_deferred_call_becomes_its_result_and_the_run_continues(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started, token = await deferred_conversation(agent, caller)

    result = await client(caller).answer(token, late("t1", "confirm", "confirmed", confirmed=True))

    assert isinstance(result, TerminalResult) and result.text == "the change is approved"
    conversation = fold(await started.store.read(conversation_session_id(IDENTITY, token)))
    results = [
        block
        for message in conversation.messages
        if message.role is Role.USER
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]
    assert [(block.tool_use_id, block.content) for block in results] == [
        ("t1", '{"confirmed":true}')
    ]


async def test_a_question_nobody_answers_in_time_defers_its_call_for_a_late_answer(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started = await agent(
        (AskHumanConfirm(),),
        (calls(call("t1", ASK_HUMAN_CONFIRM, {"question": "purge it?"})), answer("purged")),
        elicit=True,
        request_timeout=timedelta(milliseconds=100),
    )
    ack, *_, ended = await exchange(caller, prompt("purge the stream"))
    assert isinstance(ack, Ack) and ack.conversation_token
    token = ack.conversation_token

    result = await client(caller).answer(token, late("t1", "confirm", "confirmed", confirmed=True))

    assert isinstance(ended, TerminalError)
    assert (ended.code, ended.stop_reason) == (ErrorCode.DEFERRED, StopReason.DEFERRED)
    assert isinstance(result, TerminalResult) and result.text == "purged"
    conversation = fold(await started.store.read(conversation_session_id(IDENTITY, token)))
    results = [
        (block.tool_use_id, block.content)
        for message in conversation.messages
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]
    assert results == [("t1", '{"confirmed":true}')]


async def test_a_second_answer_to_the_same_call_is_refused_as_already_answered(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    _, token = await deferred_conversation(agent, caller)
    decision = late("t1", "input", "value", value="CHG-7 approved")
    await exchange(caller, answer_request(token, decision))

    ack, refusal = await exchange(caller, answer_request(token, decision))

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.ALREADY_ANSWERED


async def test_an_answer_to_a_call_the_conversation_is_not_waiting_on_is_refused(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    _, token = await deferred_conversation(agent, caller)

    ack, refusal = await exchange(
        caller, answer_request(token, late("t9", "confirm", "confirmed", confirmed=True))
    )

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.UNKNOWN_CALL


async def test_an_answer_over_the_byte_limit_is_refused_as_too_large(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    _, token = await deferred_conversation(agent, caller)
    # Within the schema's character limit, over the limit once encoded.
    value = "\u00e9" * 4096

    ack, refusal = await exchange(
        caller, answer_request(token, late("t1", "input", "value", value=value))
    )

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.ANSWER_TOO_LARGE


async def test_an_answer_for_an_unknown_token_is_refused_as_an_unknown_conversation(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent()

    ack, refusal = await exchange(
        caller, answer_request("nosuchtoken", late("t1", "approve", "choice", choice="once"))
    )

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.UNKNOWN_CONVERSATION


async def test_an_approval_given_late_runs_the_call_when_the_run_asks_again(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    tool = GatedTool("stream_rm")
    _, token = await suspended_approval(agent, caller, tool)

    messages = await exchange(
        caller, answer_request(token, late("t1", "approve", "choice", choice="once"))
    )

    result = messages[-1]
    assert isinstance(result, TerminalResult) and result.text == "finished"
    assert len(tool.executed) == 1


async def test_a_late_refusal_leaves_the_gated_call_unrun(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    tool = GatedTool("stream_rm")
    _, token = await suspended_approval(agent, caller, tool)

    messages = await exchange(caller, answer_request(token, late("t1", "approve", "no_operator")))

    assert isinstance(messages[-1], TerminalResult)
    assert tool.executed == []


async def test_a_late_no_operator_tells_the_model_nobody_approved_rather_than_a_decline(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started, token = await suspended_approval(agent, caller, GatedTool("stream_rm"))

    await exchange(caller, answer_request(token, late("t1", "approve", "no_operator")))

    conversation = fold(await started.store.read(conversation_session_id(IDENTITY, token)))
    [result] = [
        block
        for message in conversation.messages
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]
    assert json.loads(result.content)["reason"] == (
        'the caller has no operator to ask, so nobody approved "stream_rm {}"; '
        "this decision is final, do not retry"
    )
