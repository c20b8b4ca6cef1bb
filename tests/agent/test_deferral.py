"""A tool that defers: the call is journaled as deferred, the run suspends, and it continues
only once somebody supplies the answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from fisk_ai.agent.hooks import Hooks
from fisk_ai.agent.outcome import Completed, RunResult
from fisk_ai.agent.outcome import Deferred as DeferredTurn
from fisk_ai.llm.types import Role, ToolResultBlock, ToolUseBlock
from fisk_ai.sessions import answer_deferred
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.records import Decision, Deferred, ToolResult, User
from fisk_ai.tools.base import Deferral, ExecDeps, Outcome
from fisk_ai.tools.questions import ApprovalChoice
from fisk_ai.tools.toolset import ToolSet
from tests.agent.conftest import SETTINGS, FakeTool, folded, make_runner, payloads, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.prompter import ScriptedPrompter
from tests.fakes.provider import ScriptedProvider, answer, call, calls


class Crash(BaseException):
    """Stands in for the process dying: nothing in the runner catches it."""


async def _defers(arguments: str, deps: ExecDeps) -> Outcome:
    return Outcome(deferral=Deferral(note="waiting for CAB", handle="CHG-7"))


@dataclass(eq=False)
class GatedTool(FakeTool):
    """An in-process tool gated by its ai:confirm tag."""

    def confirm_trigger(self, confirm_tags: Sequence[str]) -> str | None:
        return "ai:confirm" if "ai:confirm" in self.tags else None


def deferring_tool() -> FakeTool:
    return FakeTool("approve_change", handler=_defers)


async def deferred_run(
    store: FileSessionStore, tools: ToolSet, *batch: ToolUseBlock
) -> tuple[RunResult, ScriptedProvider]:
    """A one-shot run whose first model reply makes ``batch``, with no reply after it."""
    provider = ScriptedProvider([calls(*batch)])
    async with make_runner(
        provider=provider, tools=tools, store=store, events=RecordingSink()
    ) as runner:
        result = await runner.start("change the retention")
    return result, provider


async def resume(
    store: FileSessionStore, tools: ToolSet, session_id: str, provider: ScriptedProvider
) -> RunResult:
    async with make_runner(
        provider=provider, tools=tools, store=store, events=RecordingSink()
    ) as runner:
        return await runner.resume(session_id)


async def test_a_deferral_is_journaled_and_the_turn_suspends(store: FileSessionStore) -> None:
    result, _ = await deferred_run(store, toolset(deferring_tool()), call("t1", "approve_change"))

    journaled = payloads(await store.read(result.session_id))
    assert isinstance(result.outcome, DeferredTurn) and result.outcome.calls == ("t1",)
    assert Deferred("t1", "approve_change", note="waiting for CAB", handle="CHG-7") in journaled
    assert not any(isinstance(payload, ToolResult) for payload in journaled)


async def test_the_suspended_turn_names_the_call_and_how_to_answer_it(
    store: FileSessionStore,
) -> None:
    result, _ = await deferred_run(store, toolset(deferring_tool()), call("t1", "approve_change"))

    assert "waiting for CAB" in result.message
    assert f"fisk session answer {result.session_id} t1" in result.message


async def test_the_rest_of_the_batch_runs_and_nothing_goes_back_to_the_model(
    store: FileSessionStore,
) -> None:
    status = FakeTool("status")
    result, provider = await deferred_run(
        store,
        toolset(deferring_tool(), status),
        call("t1", "approve_change"),
        call("t2", "status"),
    )

    conversation = await folded(store, result.session_id)
    assert len(status.executed) == 1
    assert [answered.tool_use_id for answered in conversation.answered] == ["t2"]
    assert provider.calls == 1


async def test_a_resume_before_the_answer_calls_no_model_and_runs_no_tool(
    store: FileSessionStore,
) -> None:
    tool = deferring_tool()
    first, _ = await deferred_run(store, toolset(tool), call("t1", "approve_change"))

    provider = ScriptedProvider()
    resumed = await resume(store, toolset(tool), first.session_id, provider)

    assert isinstance(resumed.outcome, DeferredTurn) and resumed.outcome.calls == ("t1",)
    assert "waiting for CAB" in resumed.message
    assert provider.calls == 0
    assert len(tool.executed) == 1


async def test_the_answer_reaches_the_model_as_the_calls_result_on_resume(
    store: FileSessionStore,
) -> None:
    tools = toolset(deferring_tool(), FakeTool("status"))
    first, _ = await deferred_run(store, tools, call("t1", "approve_change"), call("t2", "status"))
    await answer_deferred(store, first.session_id, "t1", "CAB approved CHG-7")

    provider = ScriptedProvider([answer("retention changed")])
    resumed = await resume(store, tools, first.session_id, provider)

    assert resumed.outcome == Completed("retention changed")
    last = provider.requests[0].messages[-1]
    assert last.role is Role.USER
    assert [block for block in last.content if isinstance(block, ToolResultBlock)] == [
        ToolResultBlock("t1", "CAB approved CHG-7"),
        ToolResultBlock("t2", "ran with {}"),
    ]


async def test_an_error_answer_reaches_the_model_as_an_error_result(
    store: FileSessionStore,
) -> None:
    tools = toolset(deferring_tool())
    first, _ = await deferred_run(store, tools, call("t1", "approve_change"))
    await answer_deferred(store, first.session_id, "t1", "CAB rejected CHG-7", is_error=True)

    provider = ScriptedProvider([answer("left as it was")])
    await resume(store, tools, first.session_id, provider)

    assert ToolResultBlock("t1", "CAB rejected CHG-7", is_error=True) in (
        provider.requests[0].messages[-1].content
    )


async def test_the_deferred_call_is_never_run_again(store: FileSessionStore) -> None:
    tool = deferring_tool()
    first, _ = await deferred_run(store, toolset(tool), call("t1", "approve_change"))
    await resume(store, toolset(tool), first.session_id, ScriptedProvider())
    await answer_deferred(store, first.session_id, "t1", "approved")

    await resume(store, toolset(tool), first.session_id, ScriptedProvider([answer("done")]))

    assert len(tool.executed) == 1


async def test_a_call_the_crash_left_unrun_runs_once_the_answer_is_in(
    store: FileSessionStore,
) -> None:
    crashing = [True]

    async def fragile(arguments: str, deps: ExecDeps) -> Outcome:
        if crashing[0]:
            crashing[0] = False
            raise Crash
        return Outcome("healthy")

    status = FakeTool("status", handler=fragile)
    tools = toolset(deferring_tool(), status)
    runner = make_runner(
        provider=ScriptedProvider([calls(call("t1", "approve_change"), call("t2", "status"))]),
        tools=tools,
        store=store,
        events=RecordingSink(),
    )
    with pytest.raises(Crash):
        async with runner:
            await runner.start("change the retention", session_id="crashed")
    await answer_deferred(store, "crashed", "t1", "approved")

    provider = ScriptedProvider([answer("done")])
    resumed = await resume(store, tools, "crashed", provider)

    assert resumed.answer == "done"
    assert ToolResultBlock("t2", "healthy") in provider.requests[0].messages[-1].content


async def test_a_grant_staged_before_the_deferral_is_journaled_after_it(
    store: FileSessionStore,
) -> None:
    tool = GatedTool("approve_change", handler=_defers, tags=("ai:confirm",))
    provider = ScriptedProvider([calls(call("t1", "approve_change"))])
    async with make_runner(
        provider=provider,
        tools=toolset(tool),
        store=store,
        events=RecordingSink(),
        prompter=ScriptedPrompter([ApprovalChoice.ALWAYS]),
    ) as runner:
        result = await runner.start("change the retention")

    kinds = [type(payload).__name__ for payload in payloads(await store.read(result.session_id))]
    assert kinds == ["Meta", "Assistant", "Deferred", "Decision", "Terminal"]
    assert Decision("approve_change") in payloads(await store.read(result.session_id))


async def test_post_tool_use_is_not_run_for_a_deferral(store: FileSessionStore) -> None:
    seen: list[str] = []

    async def record(call_: ToolUseBlock, outcome: Outcome) -> Outcome:
        seen.append(call_.id)
        return outcome

    provider = ScriptedProvider([calls(call("t1", "approve_change"), call("t2", "status"))])
    async with make_runner(
        provider=provider,
        tools=toolset(deferring_tool(), FakeTool("status")),
        store=store,
        events=RecordingSink(),
        hooks=Hooks(post_tool_use=(record,)),
    ) as runner:
        await runner.start("change the retention")

    assert seen == ["t2"]


async def test_a_chat_follow_up_while_waiting_records_nothing(store: FileSessionStore) -> None:
    provider = ScriptedProvider([calls(call("t1", "approve_change"))])
    async with make_runner(
        provider=provider,
        tools=toolset(deferring_tool()),
        store=store,
        events=RecordingSink(),
        settings=dataclasses.replace(SETTINGS, interactive=True),
    ) as runner:
        await runner.start("change the retention")
        result = await runner.follow_up("and the replicas")

    assert isinstance(result.outcome, DeferredTurn)
    assert provider.calls == 1
    assert not any(isinstance(p, User) for p in payloads(await store.read(result.session_id)))
