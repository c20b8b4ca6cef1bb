"""A served prompt's subscriptions are owned by its turn and released with it: the transport
holds no more after N prompts than before them (issue 16, item 1)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from fisk_ai.a2a.in_process import InProcessBroker, InProcessTransport
from fisk_ai.a2a.messages import TerminalResult
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.broker.server import EmbeddedBroker
from tests.fakes.provider import answer
from tests.serve.prompts import engine
from tests.serve.prompts.engine import StartAgent, client

agent = engine.agent
broker = engine.broker
caller = engine.caller

PROMPTS = 12


async def test_memory_transport_subscriptions_return_to_the_baseline(
    agent: StartAgent, broker: InProcessBroker, caller: InProcessTransport
) -> None:
    server_side = broker.connect()
    await agent(
        replies=tuple(answer(f"a{n}") for n in range(PROMPTS)), transport=server_side, elicit=True
    )
    baseline = server_side.subscription_count
    for n in range(PROMPTS):
        result = await client(caller).ask(f"q{n}")
        assert isinstance(result, TerminalResult)
    assert server_side.subscription_count == baseline


@pytest.fixture
async def nats_broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker() as running:
        yield running


async def test_nats_transport_subscriptions_return_to_the_baseline(
    agent: StartAgent, nats_broker: EmbeddedBroker
) -> None:
    server_side = NatsTransport(await nats_broker.connect(name="server"))
    caller_side = NatsTransport(await nats_broker.connect(name="caller"))
    try:
        served = await agent(
            replies=tuple(answer(f"a{n}") for n in range(PROMPTS)),
            transport=server_side,
            elicit=True,
        )
        baseline = server_side.subscription_count
        held_by_the_client = len(server_side.client._subs)
        for n in range(PROMPTS):
            result = await client(caller_side).ask(f"q{n}")
            assert isinstance(result, TerminalResult)
        assert server_side.subscription_count == baseline
        assert len(server_side.client._subs) == held_by_the_client
    finally:
        await served.server.close()
        for transport in (caller_side, server_side):
            await transport.close()
            await transport.client.close()


async def test_a_lone_surrogate_in_model_text_reaches_the_caller_replaced(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent(replies=(answer("half \ud800 done"),))
    result = await client(caller).ask("go")
    assert isinstance(result, TerminalResult)
    assert result.text == "half \ufffd done"
