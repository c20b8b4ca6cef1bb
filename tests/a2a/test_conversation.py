"""A terminal's conversation with an agent over a2a: turns by token, stop, refusals, totals."""

from __future__ import annotations

import asyncio

import pytest

from fisk_ai.a2a.conversation import AgentConversation, TurnFailed
from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.agent.events import PromptEvent, TextEvent, ToolCallEvent
from fisk_ai.agent.outcome import Completed, Suspended
from fisk_ai.serve.prompts import LOCAL
from fisk_ai.tools.base import Tool
from fisk_ai.tools.questions import ApprovalChoice
from tests.agent.conftest import FakeTool
from tests.fakes.events import RecordingSink
from tests.fakes.prompter import ScriptedPrompter
from tests.fakes.provider import answer, call, calls
from tests.serve.prompts import engine
from tests.serve.prompts.engine import IDENTITY, WAIT, Held, StartAgent

# The engine tests' fixtures, shared by name.
broker = engine.broker
caller = engine.caller
agent = engine.agent
app_tools = engine.app_tools


def conversation_on(
    caller: InProcessTransport, sink: RecordingSink, prompter: ScriptedPrompter | None = None
) -> AgentConversation:
    return AgentConversation(
        caller,
        IDENTITY,
        request_timeout=WAIT,
        events=sink,
        prompter=prompter or ScriptedPrompter([]),
    )


async def test_a_started_turn_answers_and_its_handle_is_the_journal(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started = await agent((), (answer("three streams"),), naming=LOCAL)
    sink = RecordingSink()
    conversation = conversation_on(caller, sink)

    result = await conversation.start("how many streams")

    assert isinstance(result.outcome, Completed)
    assert result.answer == "three streams"
    assert result.llm_calls == 1
    assert result.session_id == conversation.handle != ""
    assert [summary.run_id for summary in await started.store.list()] == [conversation.handle]
    assert [event.text for event in sink.of(TextEvent)] == ["three streams"]


async def test_a_follow_up_continues_the_same_conversation(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started = await agent((), (answer("three"), answer("ORDERS, EVENTS, LOGS")), naming=LOCAL)
    conversation = conversation_on(caller, RecordingSink())
    first = await conversation.start("how many streams")

    second = await conversation.follow_up("name them")

    assert second.answer == "ORDERS, EVENTS, LOGS"
    assert second.session_id == first.session_id
    assert second.llm_calls == 2
    later_request = started.provider.requests[1]
    assert "how many streams" in str(later_request.messages)


async def test_the_calls_arrive_as_loop_events_and_questions_reach_the_prompter(
    agent: StartAgent, caller: InProcessTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(
        app_tools,
        (calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("removed")),
        elicit=True,
        naming=LOCAL,
    )
    sink = RecordingSink()
    prompter = ScriptedPrompter([ApprovalChoice.ONCE])
    conversation = conversation_on(caller, sink, prompter)

    result = await conversation.start("remove ORDERS")

    assert result.answer == "removed"
    assert len(prompter.questions) == 1
    (tool_call,) = sink.of(ToolCallEvent)
    assert tool_call.display == "stream rm -- ORDERS"


async def test_stop_parks_the_turn_and_resume_finishes_it(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    held = Held()
    await agent(
        (FakeTool("slow", held),), (calls(call("t1", "slow")), answer("done")), naming=LOCAL
    )
    conversation = conversation_on(caller, RecordingSink())
    running = asyncio.create_task(conversation.start("go"))
    await held.started.wait()

    await conversation.stop()
    held.release.set()
    stopped = await running
    resumed = await conversation.resume(stopped.session_id)

    assert isinstance(stopped.outcome, Suspended)
    assert isinstance(resumed.outcome, Completed)
    assert resumed.answer == "done"


async def test_a_refused_turn_raises_the_agents_sentence(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent((), (), naming=LOCAL)
    conversation = conversation_on(caller, RecordingSink())

    with pytest.raises(TurnFailed, match="holds no conversation"):
        await conversation.resume("3MnmDrzdABCRZCDARacijHAI3zl")


async def test_clear_lets_the_next_start_open_another_conversation(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent((), (answer("one"), answer("two")), naming=LOCAL)
    conversation = conversation_on(caller, RecordingSink())
    first = await conversation.start("first")

    conversation.clear()
    second = await conversation.start("second")

    assert conversation.handle == second.session_id != first.session_id
    assert second.llm_calls == 1


async def test_read_replays_a_finished_conversation_as_loop_events(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent((), (answer("three streams"),), naming=LOCAL)
    conversation = conversation_on(caller, RecordingSink())
    finished = await conversation.start("how many streams")

    replayed = await conversation_on(caller, RecordingSink()).read(finished.session_id)

    assert [type(event) for event in replayed] == [PromptEvent, TextEvent]
    assert isinstance(replayed[0], PromptEvent) and replayed[0].text == "how many streams"
    assert isinstance(replayed[1], TextEvent) and replayed[1].text == "three streams"
