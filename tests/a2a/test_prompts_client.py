"""The prompts client against a running engine: a result returned and events passed on, a read's
blocks passed on."""

from __future__ import annotations

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import EventMessage, EventPrompt, EventText, TerminalResult, UnknownEvent
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.a2a.vocabulary import StopReason
from tests.fakes.provider import answer
from tests.serve.prompts import engine
from tests.serve.prompts.conversing import converse
from tests.serve.prompts.engine import StartAgent, client

# The engine tests' fixtures, shared by name.
broker = engine.broker
caller = engine.caller
agent = engine.agent


async def test_the_client_returns_the_result_and_passes_events_on(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent(replies=(answer("hello there"),))
    seen: list[EventMessage | UnknownEvent] = []

    result = await client(caller).ask("hi", options=TurnOptions(on_event=seen.append))

    assert isinstance(result, TerminalResult) and result.text == "hello there"
    assert any(isinstance(event, EventText) and event.block.final for event in seen)


async def test_the_client_read_passes_the_blocks_on_and_returns_the_result(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent(replies=(answer("hello there"),))
    token = await converse(caller, "hi")
    seen: list[EventMessage | UnknownEvent] = []

    result = await client(caller).read(token, replay=10, on_event=seen.append)

    assert isinstance(result, TerminalResult) and result.stop_reason == StopReason.END_TURN
    texts = [event.block.text for event in seen if isinstance(event, EventText | EventPrompt)]
    assert texts == ["hi", "hello there"]
