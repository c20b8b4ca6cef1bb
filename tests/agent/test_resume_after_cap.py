"""A turn that used every iteration it was allowed is over: resuming the conversation calls no
model, says again how the turn ended, and the conversation goes on with the next prompt."""

import dataclasses

from fisk_ai.agent.outcome import Completed, IterationsSpent
from fisk_ai.agent.replay import stopped_at_the_iteration_cap
from fisk_ai.llm.types import user_text
from fisk_ai.sessions.file import FileSessionStore
from tests.agent.conftest import SETTINGS, FakeTool, folded, make_runner, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls

CAPPED = dataclasses.replace(SETTINGS, max_iterations=2)
INTERACTIVE = dataclasses.replace(CAPPED, interactive=True)


async def capped_session(
    store: FileSessionStore, sink: RecordingSink, *, interactive: bool = False
) -> str:
    provider = ScriptedProvider([calls(call("t1", "a")), calls(call("t2", "a"))])
    async with make_runner(
        provider=provider,
        tools=toolset(FakeTool("a")),
        store=store,
        events=sink,
        settings=INTERACTIVE if interactive else CAPPED,
    ) as runner:
        result = await runner.start("work")
    assert isinstance(result.outcome, IterationsSpent)
    return result.session_id


async def test_a_full_screen_resume_after_the_cap_calls_no_model_and_takes_the_next_prompt(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    session_id = await capped_session(store, sink)
    provider = ScriptedProvider([answer("carried on")])
    async with make_runner(
        provider=provider,
        tools=toolset(FakeTool("a")),
        store=store,
        events=sink,
        settings=INTERACTIVE,
    ) as resumed:
        at_cap = await resumed.resume(session_id)
        calls_at_resume = provider.calls
        follow = await resumed.follow_up("go on")

    assert isinstance(at_cap.outcome, IterationsSpent)
    assert "used all 2 iterations" in at_cap.message
    assert calls_at_resume == 0
    assert follow.outcome == Completed("carried on")
    assert provider.requests[0].messages[-1].content[-1] == user_text("go on").content[0]


async def test_a_conversation_left_in_the_full_screen_after_the_cap_reads_as_stopped_at_it(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    session_id = await capped_session(store, sink, interactive=True)

    assert stopped_at_the_iteration_cap(await folded(store, session_id))


async def test_a_conversation_stopped_part_way_does_not_read_as_stopped_at_the_cap(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([calls(call("t1", "a"))])
    async with make_runner(
        provider=provider,
        tools=toolset(FakeTool("a")),
        store=store,
        events=sink,
        settings=dataclasses.replace(INTERACTIVE, max_iterations=5),
    ) as runner:
        runner.suspend.set()
        result = await runner.start("work")

    assert not stopped_at_the_iteration_cap(await folded(store, result.session_id))
