"""The prompts channel's intake: the reply set, follow-up turns by token, cancel and resume, and
the refusals (busy, capacity, unknown conversation, bad requests).

Most tests run over the in-memory transport; one goes over a real nats-server. Every message the
engine sends is checked against the upstream schemas (ours when those are not beside the
checkout).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import RemoteServiceError
from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import (
    Ack,
    Cancel,
    EventToolCall,
    RequestResume,
    TerminalError,
    TerminalResult,
    ToolRequest,
    new_request,
)
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.a2a.transport import cancel_subject, task_subject
from fisk_ai.a2a.vocabulary import Direction, ErrorCode, StopReason
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.serve.prompts import conversation_session_id
from fisk_ai.tools.base import Tool
from tests.agent.conftest import FakeTool
from tests.fakes.provider import answer, call, calls
from tests.serve.prompts.engine import (
    CALLER,
    IDENTITY,
    WAIT,
    Held,
    StartAgent,
    client,
    exchange,
    prompt,
)


async def test_a_prompt_is_answered_with_ack_events_and_result_in_sequence(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(app_tools, (calls(call("t1", "status"), text="checking"), answer("two streams")))

    messages = await exchange(caller, prompt())

    ack, *events, result = messages
    assert isinstance(ack, Ack) and ack.accepted and ack.conversation_token
    assert [message.sequence for message in messages] == list(range(1, len(messages) + 1))
    assert any(isinstance(event, EventToolCall) for event in events)
    assert isinstance(result, TerminalResult)
    assert (result.stop_reason, result.text) == (StopReason.END_TURN, "two streams")
    assert result.usage is not None
    assert (result.usage.llm_calls, result.usage.tool_calls) == (2, 1)


async def test_the_conversation_is_journaled_under_the_token_derived_id(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started = await agent(replies=(answer("hi"),))

    ack, *_ = await exchange(caller, prompt())

    assert isinstance(ack, Ack) and ack.conversation_token is not None
    session_id = conversation_session_id(IDENTITY, ack.conversation_token)
    assert session_id.startswith("t-") and len(session_id) == 2 + 64
    assert await started.store.read(session_id)


async def test_a_follow_up_turn_continues_the_conversation_by_token(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started = await agent(replies=(answer("three streams"), answer("ORDERS")))
    acks: list[Ack] = []

    await client(caller).ask("how many streams", options=TurnOptions(on_ack=acks.append))
    token = acks[0].conversation_token
    result = await client(caller).ask("first one?", token=token)

    assert isinstance(result, TerminalResult) and result.text == "ORDERS"
    last_request = started.provider.requests[-1]
    sent = " ".join(
        getattr(block, "text", "") for message in last_request.messages for block in message.content
    )
    assert "how many streams" in sent and "three streams" in sent
    assert result.usage is not None and result.usage.llm_calls == 2


async def test_a_second_turn_while_one_runs_is_refused_as_busy(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    held = Held()
    await agent((FakeTool("slow", held),), (calls(call("t1", "slow")), answer("done")))
    acks: list[Ack] = []
    first = asyncio.create_task(client(caller).ask("go", options=TurnOptions(on_ack=acks.append)))
    await held.started.wait()

    second = await client(caller).ask("again", token=acks[0].conversation_token)
    held.release.set()
    await first

    assert isinstance(second, TerminalError) and second.code == ErrorCode.CONVERSATION_BUSY


async def test_a_prompt_with_every_worker_busy_is_refused_for_capacity(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    held = Held()
    await agent((FakeTool("slow", held),), (calls(call("t1", "slow")), answer("done")), workers=1)
    first = asyncio.create_task(client(caller).ask("go"))
    await held.started.wait()

    messages = await exchange(caller, prompt("another"))
    held.release.set()
    await first

    ack, refusal = messages
    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.CAPACITY


async def test_an_unknown_token_is_refused_as_an_unknown_conversation(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent()

    result = await client(caller).ask("hi", token="nosuchtoken")

    assert isinstance(result, TerminalError) and result.code == ErrorCode.UNKNOWN_CONVERSATION


@pytest.mark.parametrize(
    "data",
    [
        b"{not json",
        b"x" * (800 * 1024),
        json.dumps({**json.loads(encode(prompt())), "prompt": ""}).encode(),
        b'{"protocol":"io.choria.fisk-ai.v1.request.prompt","x":'
        + b"[" * 5000
        + b"]" * 5000
        + b"}",
        b"\xff\xfe{}",
    ],
    ids=["malformed", "oversized", "invalid", "nested", "not-utf8"],
)
async def test_a_bad_request_is_answered_400_and_the_engine_keeps_serving(
    agent: StartAgent, caller: InProcessTransport, data: bytes
) -> None:
    await agent(replies=(answer("still here"),))

    with pytest.raises(RemoteServiceError) as refused:
        await caller.request(task_subject(IDENTITY), data, timeout=WAIT)
    result = await client(caller).ask("hi")

    assert refused.value.service_code == 400
    assert isinstance(result, TerminalResult) and result.text == "still here"


async def test_a_message_of_another_protocol_is_answered_400(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent()
    tool_call = new_request(ToolRequest, sender=CALLER, name="status")

    with pytest.raises(RemoteServiceError) as refused:
        await caller.request(task_subject(IDENTITY), encode(tool_call), timeout=WAIT)

    assert refused.value.service_code == 400


async def test_a_cancel_parks_the_run_and_it_ends_suspended(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    held = Held()
    await agent((FakeTool("slow", held),), (calls(call("t1", "slow")), answer("never sent")))
    running = asyncio.create_task(client(caller).ask("go", options=TurnOptions(request="r1")))
    await held.started.wait()

    cancel = new_request(Cancel, sender=CALLER, request="r1", reason="enough")
    acknowledged = decode(
        await caller.request(cancel_subject(IDENTITY, "r1"), encode(cancel), timeout=WAIT),
        direction=Direction.TO_CALLER,
    )
    held.release.set()
    result = await running

    assert isinstance(acknowledged, Ack) and acknowledged.accepted
    assert isinstance(result, TerminalError) and result.code == ErrorCode.SUSPENDED
    assert result.usage is not None and result.usage.llm_calls == 1


async def test_a_resume_finishes_a_canceled_run(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    held = Held()
    await agent((FakeTool("slow", held),), (calls(call("t1", "slow")), answer("finished")))
    acks: list[Ack] = []
    running = asyncio.create_task(
        client(caller).ask("go", options=TurnOptions(request="r3", on_ack=acks.append))
    )
    await held.started.wait()
    cancel = new_request(Cancel, sender=CALLER, request="r3")
    await caller.request(cancel_subject(IDENTITY, "r3"), encode(cancel), timeout=WAIT)
    held.release.set()
    await running
    resume = new_request(
        RequestResume, sender=CALLER, conversation_token=acks[0].conversation_token
    )

    *_, result = await exchange(caller, resume)

    assert isinstance(result, TerminalResult) and result.text == "finished"


@pytest.mark.skipif(locate_server_binary() is None, reason="no nats-server binary on this machine")
async def test_a_prompt_round_trip_over_nats(agent: StartAgent) -> None:
    async with EmbeddedBroker() as broker:
        serving = NatsTransport(await broker.connect(name="server"))
        calling = NatsTransport(await broker.connect(name="caller"))
        started = await agent(replies=(answer("over the wire"),), transport=serving)
        try:
            result = await client(calling).ask("hi")
        finally:
            await started.server.close()
            for transport in (calling, serving):
                await transport.close()
                await transport.client.close()

    assert isinstance(result, TerminalResult) and result.text == "over the wire"


async def test_a_follow_up_whose_budget_is_already_spent_is_refused_before_any_ack_accepts(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started = await agent(replies=(answer("three streams", tokens=10),))
    acks: list[Ack] = []
    await client(caller).ask("how many streams", options=TurnOptions(on_ack=acks.append))
    token = acks[0].conversation_token

    messages = await exchange(
        caller, prompt("and now?", conversation_token=token, budget={"max_tokens": 15})
    )

    ack, refusal = messages
    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError)
    assert refusal.code == ErrorCode.BUDGET_EXHAUSTED
    assert "without conversation_token" in refusal.error
    assert started.provider.calls == 1


async def test_every_refusal_carries_a_stop_reason(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent()

    *_, refusal = await exchange(caller, prompt(conversation_token="nosuchtoken"))

    assert isinstance(refusal, TerminalError)
    assert refusal.code == ErrorCode.UNKNOWN_CONVERSATION
    assert refusal.stop_reason == StopReason.ERROR
