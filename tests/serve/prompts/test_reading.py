"""Reading a stored conversation back: the blocks between the replay statuses, the rounding to
whole turns, the block cap, and an unknown token.

Everything runs over the in-memory transport; every message the engine sends is checked against
the upstream schemas (ours when those are not beside the checkout) as it arrives.
"""

from __future__ import annotations

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import (
    Ack,
    EventPrompt,
    EventStatus,
    EventText,
    EventThinking,
    EventToolCall,
    EventToolResult,
    Message,
    RequestRead,
    TerminalError,
    TerminalResult,
    new_request,
)
from fisk_ai.a2a.prompts_client import MAX_REPLAY_BLOCKS
from fisk_ai.a2a.vocabulary import ErrorCode
from fisk_ai.agent.events import StatusPhase
from tests.agent.conftest import FakeTool
from tests.fakes.provider import answer, call, calls
from tests.serve.prompts.conversing import converse
from tests.serve.prompts.engine import CALLER, StartAgent, exchange


def read_request(token: str, replay: int) -> RequestRead:
    return new_request(RequestRead, sender=CALLER, conversation_token=token, replay=replay)


def replayed(messages: list[Message]) -> list[Message]:
    """The blocks between replay_start and replay_end."""
    phases = [
        index
        for index, message in enumerate(messages)
        if isinstance(message, EventStatus)
        and message.block.phase in (StatusPhase.REPLAY_START, StatusPhase.REPLAY_END)
    ]
    start, end = phases
    return messages[start + 1 : end]


def replay_end(messages: list[Message]) -> EventStatus:
    [end] = [
        message
        for message in messages
        if isinstance(message, EventStatus) and message.block.phase == StatusPhase.REPLAY_END
    ]
    return end


async def test_a_read_replays_the_conversation_between_replay_status_blocks(
    agent: StartAgent, caller: InProcessTransport
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
    assert isinstance(start, EventStatus) and start.block.phase == StatusPhase.REPLAY_START
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
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent(replies=(answer("one"), answer("two")))
    token = await converse(caller, "first", "second")

    messages = await exchange(caller, read_request(token, 200))

    end = replay_end(messages)
    assert end.block.count == len(replayed(messages)) == 4
    assert not end.block.truncated
    assert end.block.usage is not None and end.block.usage.llm_calls == 2


async def test_a_thinking_signature_is_not_replayed(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent((FakeTool("status"),), (calls(call("t1", "status"), thinking="hmm"), answer("ok")))
    token = await converse(caller, "check")

    messages = await exchange(caller, read_request(token, 10))

    [thinking] = [message for message in messages if isinstance(message, EventThinking)]
    assert thinking.block.text == "hmm" and not thinking.block.signature


async def test_a_short_replay_rounds_up_to_the_whole_last_turn(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent((FakeTool("status"),), (answer("hello"), calls(call("t1", "status")), answer("ok")))
    token = await converse(caller, "hi", "check")

    messages = await exchange(caller, read_request(token, 1))

    blocks = replayed(messages)
    assert isinstance(blocks[0], EventPrompt) and blocks[0].block.text == "check"
    assert [type(block) for block in blocks[1:]] == [EventToolCall, EventToolResult, EventText]
    assert replay_end(messages).block.truncated


async def test_a_read_sends_at_most_the_block_cap_and_no_result_without_its_call(
    agent: StartAgent, caller: InProcessTransport
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
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent()

    ack, refusal = await exchange(caller, read_request("nosuchtoken", 5))

    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.UNKNOWN_CONVERSATION
