"""Reading a stored conversation back and answering a call after its run ended.

Everything runs over the in-memory transport; every message the engine sends is checked against
the upstream schemas (ours when those are not beside the checkout) as it arrives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fisk_ai.a2a.memory import MemoryTransport
from fisk_ai.a2a.messages import (
    Ack,
    ErrorCode,
    EventMessage,
    EventPrompt,
    EventStatus,
    EventText,
    EventThinking,
    EventToolCall,
    EventToolResult,
    Message,
    RequestAnswer,
    RequestRead,
    StopReason,
    TerminalError,
    TerminalResult,
    UnknownEvent,
    new_request,
)
from fisk_ai.a2a.messages import Answer as LateAnswer
from fisk_ai.a2a.prompts_client import answer as send_answer
from fisk_ai.a2a.prompts_client import read
from fisk_ai.a2a.prompts_server import (
    MAX_REPLAY_BLOCKS,
    REPLAY_END_PHASE,
    REPLAY_START_PHASE,
    conversation_session_id,
)
from fisk_ai.llm.types import Role, ToolResultBlock
from fisk_ai.sessions.fold import fold
from fisk_ai.tools.base import Deferral, ExecDeps, Outcome
from fisk_ai.tools.builtin.hitl import ASK_HUMAN_CONFIRM, AskHumanConfirm
from tests.a2a import test_prompts as engine
from tests.a2a.test_prompts import CALLER, IDENTITY, WAIT, Agent, StartAgent, exchange, prompt
from tests.agent.conftest import FakeTool
from tests.fakes.provider import answer, call, calls

# The engine tests' fixtures, shared by name.
broker = engine.broker
caller = engine.caller
agent = engine.agent


async def converse(caller: MemoryTransport, *texts: str) -> str:
    """Run one turn per text in one conversation and return its token."""
    token: str | None = None
    for text in texts:
        ack, *_, result = await exchange(caller, prompt(text, conversation_token=token))
        assert isinstance(ack, Ack) and ack.conversation_token
        assert isinstance(result, TerminalResult)
        token = ack.conversation_token
    assert token is not None
    return token


def read_request(token: str, replay: int) -> RequestRead:
    return new_request(RequestRead, sender=CALLER, conversation_token=token, replay=replay)


def replayed(messages: list[Message]) -> list[Message]:
    """The blocks between replay_start and replay_end."""
    phases = [
        index
        for index, message in enumerate(messages)
        if isinstance(message, EventStatus)
        and message.block.phase in (REPLAY_START_PHASE, REPLAY_END_PHASE)
    ]
    start, end = phases
    return messages[start + 1 : end]


def replay_end(messages: list[Message]) -> EventStatus:
    [end] = [
        message
        for message in messages
        if isinstance(message, EventStatus) and message.block.phase == REPLAY_END_PHASE
    ]
    return end


async def test_a_read_replays_the_conversation_between_replay_status_blocks(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    status = FakeTool("status")
    await agent(
        (status,),
        (calls(call("t1", "status"), text="checking", thinking="hmm"), answer("two streams")),
    )
    token = await converse(caller, "how many streams")

    messages = await exchange(caller, read_request(token, 50))

    ack, start, *_ = messages
    assert isinstance(ack, Ack) and ack.accepted and ack.conversation_token == token
    assert isinstance(start, EventStatus) and start.block.phase == REPLAY_START_PHASE
    kinds = [type(message) for message in replayed(messages)]
    assert kinds == [
        EventPrompt,
        EventThinking,
        EventText,
        EventToolCall,
        EventToolResult,
        EventText,
    ]
    assert isinstance(messages[-1], TerminalResult)
    assert [message.sequence for message in messages] == list(range(1, len(messages) + 1))


async def test_replay_end_counts_the_blocks_and_carries_the_conversation_usage(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    await agent(replies=(answer("one"), answer("two")))
    token = await converse(caller, "first", "second")

    messages = await exchange(caller, read_request(token, 200))

    end = replay_end(messages)
    assert end.block.count == len(replayed(messages)) == 4
    assert not end.block.truncated
    assert end.block.usage is not None and end.block.usage.llm_calls == 2


async def test_a_thinking_signature_is_not_replayed(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    await agent((FakeTool("status"),), (calls(call("t1", "status"), thinking="hmm"), answer("ok")))
    token = await converse(caller, "check")

    messages = await exchange(caller, read_request(token, 10))

    [thinking] = [message for message in messages if isinstance(message, EventThinking)]
    assert thinking.block.text == "hmm" and not thinking.block.signature


async def test_a_short_replay_rounds_up_to_the_whole_last_turn(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    await agent((FakeTool("status"),), (answer("hello"), calls(call("t1", "status")), answer("ok")))
    token = await converse(caller, "hi", "check")

    messages = await exchange(caller, read_request(token, 1))

    blocks = replayed(messages)
    assert isinstance(blocks[0], EventPrompt) and blocks[0].block.text == "check"
    assert [type(block) for block in blocks[1:]] == [EventToolCall, EventToolResult, EventText]
    assert replay_end(messages).block.truncated


async def test_a_read_sends_at_most_the_block_cap_and_no_result_without_its_call(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    many = tuple(call(f"t{index}", "status") for index in range(MAX_REPLAY_BLOCKS // 2 + 5))
    await agent((FakeTool("status"),), (calls(*many), answer("done")))
    token = await converse(caller, "check everything")

    messages = await exchange(caller, read_request(token, 1000))

    blocks = replayed(messages)
    assert len(blocks) <= MAX_REPLAY_BLOCKS
    assert replay_end(messages).block.count == len(blocks)
    assert replay_end(messages).block.truncated
    called = {block.block.id for block in blocks if isinstance(block, EventToolCall)}
    answered = {block.block.call_id for block in blocks if isinstance(block, EventToolResult)}
    assert answered <= called


async def test_a_read_of_an_unknown_token_is_refused_as_an_unknown_conversation(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    await agent()

    ack, refusal = await exchange(caller, read_request("nosuchtoken", 5))

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.UNKNOWN_CONVERSATION


async def test_the_client_read_passes_the_blocks_on_and_returns_the_result(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    await agent(replies=(answer("hello there"),))
    token = await converse(caller, "hi")
    seen: list[EventMessage | UnknownEvent] = []

    result = await read(
        caller, IDENTITY, token, replay=10, request_timeout=WAIT, on_event=seen.append
    )

    assert isinstance(result, TerminalResult) and result.stop_reason == StopReason.END_TURN
    texts = [event.block.text for event in seen if isinstance(event, EventText | EventPrompt)]
    assert texts == ["hi", "hello there"]


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


async def deferred_conversation(agent: StartAgent, caller: MemoryTransport) -> tuple[Agent, str]:
    """A conversation whose run ended waiting on deferred call t1, with one reply left."""
    started = await agent(
        (FakeTool("approve_change", handler=_defers),),
        (calls(call("t1", "approve_change")), answer("the change is approved")),
    )
    ack, *_, ended = await exchange(caller, prompt("change the retention"))
    assert isinstance(ack, Ack) and ack.conversation_token
    assert isinstance(ended, TerminalError) and ended.code == ErrorCode.DEFERRED
    return started, ack.conversation_token


async def suspended_approval(agent: StartAgent, caller: MemoryTransport, tool: FakeTool) -> str:
    """A conversation whose run ended suspended on the unanswered approval of call t1."""
    await agent(
        (tool,),
        (calls(call("t1", tool.name)), answer("finished")),
        elicit=True,
        request_timeout=timedelta(milliseconds=100),
    )
    ack, *_, ended = await exchange(caller, prompt("remove ORDERS"))
    assert isinstance(ack, Ack) and ack.conversation_token
    assert isinstance(ended, TerminalError) and ended.code == ErrorCode.SUSPENDED
    return ack.conversation_token


async def test_an_answer_to_a_deferred_call_becomes_its_result_and_the_run_continues(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    started, token = await deferred_conversation(agent, caller)

    result = await send_answer(
        caller,
        IDENTITY,
        token,
        late("t1", "confirm", "confirmed", confirmed=True),
        request_timeout=WAIT,
    )

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
    agent: StartAgent, caller: MemoryTransport
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

    result = await send_answer(
        caller,
        IDENTITY,
        token,
        late("t1", "confirm", "confirmed", confirmed=True),
        request_timeout=WAIT,
    )

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
    agent: StartAgent, caller: MemoryTransport
) -> None:
    _, token = await deferred_conversation(agent, caller)
    decision = late("t1", "input", "value", value="CHG-7 approved")
    await exchange(caller, answer_request(token, decision))

    ack, refusal = await exchange(caller, answer_request(token, decision))

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.ALREADY_ANSWERED


async def test_an_answer_to_a_call_the_conversation_is_not_waiting_on_is_refused(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    _, token = await deferred_conversation(agent, caller)

    ack, refusal = await exchange(
        caller, answer_request(token, late("t9", "confirm", "confirmed", confirmed=True))
    )

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.UNKNOWN_CALL


async def test_an_answer_over_the_byte_limit_is_refused_as_too_large(
    agent: StartAgent, caller: MemoryTransport
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
    agent: StartAgent, caller: MemoryTransport
) -> None:
    await agent()

    ack, refusal = await exchange(
        caller, answer_request("nosuchtoken", late("t1", "approve", "choice", choice="once"))
    )

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.UNKNOWN_CONVERSATION


async def test_an_approval_given_late_runs_the_call_when_the_run_asks_again(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    tool = GatedTool("stream_rm")
    token = await suspended_approval(agent, caller, tool)

    messages = await exchange(
        caller, answer_request(token, late("t1", "approve", "choice", choice="once"))
    )

    result = messages[-1]
    assert isinstance(result, TerminalResult) and result.text == "finished"
    assert len(tool.executed) == 1


async def test_a_late_refusal_leaves_the_gated_call_unrun(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    tool = GatedTool("stream_rm")
    token = await suspended_approval(agent, caller, tool)

    messages = await exchange(caller, answer_request(token, late("t1", "approve", "no_operator")))

    assert isinstance(messages[-1], TerminalResult)
    assert tool.executed == []
