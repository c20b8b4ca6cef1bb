import asyncio
import dataclasses
import json
from datetime import timedelta
from pathlib import Path

import pytest

from fisk_ai.agent.events import (
    StatusEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
    WarningKind,
)
from fisk_ai.agent.gate import NO_OPERATOR
from fisk_ai.agent.hooks import Allow, Deny, Hooks, PreToolDecision, Rewrite
from fisk_ai.agent.loop import AgentError
from fisk_ai.agent.outcome import (
    BudgetSpent,
    Completed,
    Declined,
    Failed,
    IterationsSpent,
    Suspended,
)
from fisk_ai.agent.runner import Runner
from fisk_ai.llm.registry import ProviderUnreachable
from fisk_ai.llm.types import Role, ToolResultBlock, ToolUseBlock
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.records import (
    Assistant,
    Decision,
    Record,
    Terminal,
    TerminalReason,
    ToolResult,
)
from fisk_ai.tools.base import ExecDeps, Outcome, Tool
from fisk_ai.tools.builtin.hitl import AskHumanConfirm
from fisk_ai.tools.questions import ApprovalChoice, ApprovalQuestion, ConfirmQuestion
from fisk_ai.tools.toolset import ToolSet
from tests.agent.conftest import SETTINGS, FakeTool, folded, make_runner, payloads, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.prompter import INTERRUPT, ScriptedPrompter
from tests.fakes.provider import ScriptedProvider, answer, call, calls


def tool_named(tools: tuple[Tool, ...], name: str) -> Tool:
    return next(tool for tool in tools if tool.name == name)


def results_of(records: list[Record]) -> list[ToolResultBlock]:
    return [payload.result for payload in payloads(records) if isinstance(payload, ToolResult)]


async def test_an_unknown_tool_is_answered_with_an_error_and_a_warning(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([calls(call("t1", "nope")), answer("ok")])

    async with make_runner(
        provider=provider, tools=toolset(FakeTool("real")), store=store, events=sink
    ) as runner:
        result = await runner.start("go")

    assert results_of(await store.read(result.session_id)) == [
        ToolResultBlock("t1", 'unknown tool "nope"', is_error=True)
    ]
    assert WarningEvent(WarningKind.UNKNOWN_TOOL, name="nope") in sink.events


async def test_a_pre_tool_use_denial_answers_with_its_reason_and_runs_nothing(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    tool = FakeTool("wipe")

    async def refuse(call: ToolUseBlock) -> PreToolDecision:
        return Deny("wiping is not allowed here")

    provider = ScriptedProvider([calls(call("t1", "wipe")), answer("ok")])
    async with make_runner(
        provider=provider,
        tools=toolset(tool),
        store=store,
        events=sink,
        hooks=Hooks(pre_tool_use=(refuse,)),
    ) as runner:
        result = await runner.start("go")

    assert tool.executed == []
    assert results_of(await store.read(result.session_id)) == [
        ToolResultBlock("t1", "wiping is not allowed here", is_error=True)
    ]


async def test_a_rewrite_to_an_unknown_tool_aborts_the_run(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    tool = FakeTool("real")

    async def redirect(call: ToolUseBlock) -> PreToolDecision:
        return Rewrite("ghost", "{}")

    provider = ScriptedProvider([calls(call("t1", "real"))])
    runner = make_runner(
        provider=provider,
        tools=toolset(tool),
        store=store,
        events=sink,
        hooks=Hooks(pre_tool_use=(redirect,)),
    )
    async with runner:
        with pytest.raises(AgentError, match='unknown tool "ghost"'):
            await runner.start("go")
        session_id = runner.session_id

    records = payloads(await store.read(session_id))
    assert tool.executed == []
    assert isinstance(records[-1], Terminal)
    assert records[-1].reason is TerminalReason.ERROR


async def test_a_rewrite_with_arguments_that_are_not_an_object_aborts_the_run(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    async def garble(call: ToolUseBlock) -> PreToolDecision:
        return Rewrite(call.name, "[1, 2")

    runner = make_runner(
        provider=ScriptedProvider([calls(call("t1", "real"))]),
        tools=toolset(FakeTool("real")),
        store=store,
        events=sink,
        hooks=Hooks(pre_tool_use=(garble,)),
    )
    async with runner:
        with pytest.raises(AgentError, match="not valid JSON"):
            await runner.start("go")


async def test_a_rewrite_runs_the_new_tool_behind_the_original_tools_gate(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    async def redirect(call: ToolUseBlock) -> PreToolDecision:
        return Rewrite("status", "{}")

    prompter = ScriptedPrompter([ApprovalChoice.ONCE])
    provider = ScriptedProvider([calls(call("t1", "stream_rm", {"stream": "X"})), answer("ok")])
    async with make_runner(
        provider=provider,
        tools=toolset(*app_tools),
        store=store,
        events=sink,
        prompter=prompter,
        hooks=Hooks(pre_tool_use=(redirect,)),
    ) as runner:
        result = await runner.start("go")

    [asked] = prompter.questions
    assert isinstance(asked, ApprovalQuestion)
    assert (asked.tool_name, asked.trigger) == ("status", "ai:confirm")
    [ran] = results_of(await store.read(result.session_id))
    assert json.loads(ran.content)["command"] == "status"


async def test_invalid_arguments_never_reach_the_gate(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    prompter = ScriptedPrompter()
    provider = ScriptedProvider([calls(call("t1", "stream_rm", {"force": True})), answer("ok")])
    async with make_runner(
        provider=provider, tools=toolset(*app_tools), store=store, events=sink, prompter=prompter
    ) as runner:
        result = await runner.start("go")

    [refused] = results_of(await store.read(result.session_id))
    assert refused.is_error
    assert "stream" in refused.content
    assert prompter.questions == []


async def test_with_no_prompter_the_gate_denies_and_says_so(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    provider = ScriptedProvider([calls(call("t1", "stream_rm", {"stream": "X"})), answer("ok")])
    async with make_runner(
        provider=provider, tools=toolset(*app_tools), store=store, events=sink
    ) as runner:
        result = await runner.start("go")

    [denied] = results_of(await store.read(result.session_id))
    assert not denied.is_error
    assert json.loads(denied.content) == {"allowed": False, "reason": NO_OPERATOR}


async def test_declining_tells_the_model_the_decision_is_final(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    provider = ScriptedProvider(
        [calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("ok")]
    )
    async with make_runner(
        provider=provider,
        tools=toolset(*app_tools),
        store=store,
        events=sink,
        prompter=ScriptedPrompter([ApprovalChoice.NO]),
    ) as runner:
        result = await runner.start("go")

    [declined] = results_of(await store.read(result.session_id))
    assert not declined.is_error
    assert json.loads(declined.content) == {
        "allowed": False,
        "reason": 'the operator declined to run "stream rm -- ORDERS"; '
        "this decision is final, do not retry",
    }


async def test_the_approval_carries_the_argument_vector_the_command_would_run(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    prompter = ScriptedPrompter([ApprovalChoice.NO])
    provider = ScriptedProvider(
        [calls(call("t1", "stream_rm", {"stream": "prod; rm -rf /"})), answer("ok")]
    )
    async with make_runner(
        provider=provider, tools=toolset(*app_tools), store=store, events=sink, prompter=prompter
    ) as runner:
        await runner.start("go")

    [asked] = prompter.questions
    assert isinstance(asked, ApprovalQuestion)
    assert asked.argv == ("stream", "rm", "--", "prod; rm -rf /")


async def test_a_rewritten_call_is_approved_and_run_as_one_argument_vector(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    async def retarget(call: ToolUseBlock) -> PreToolDecision:
        return Rewrite("stream_rm", '{"stream": "SCRATCH", "force": true}')

    prompter = ScriptedPrompter([ApprovalChoice.ONCE])
    provider = ScriptedProvider(
        [calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("ok")]
    )
    async with make_runner(
        provider=provider,
        tools=toolset(*app_tools),
        store=store,
        events=sink,
        prompter=prompter,
        hooks=Hooks(pre_tool_use=(retarget,)),
    ) as runner:
        await runner.start("go")

    [asked] = prompter.questions
    assert isinstance(asked, ApprovalQuestion)
    [traced] = [event for event in sink.events if isinstance(event, ToolCallEvent)]
    [result] = [event for event in sink.events if isinstance(event, ToolResultEvent)]
    ran = tuple(json.loads(result.output)["argv"])
    assert asked.argv == ("stream", "rm", "--force", "--", "SCRATCH")
    assert asked.display == "stream rm --force -- SCRATCH"
    assert traced.command == asked.argv
    assert ran == asked.argv


async def test_a_confirm_tags_entry_gates_like_ai_confirm(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    prompter = ScriptedPrompter([ApprovalChoice.NO])
    settings = dataclasses.replace(SETTINGS, confirm_tags=("impact:rw",))
    provider = ScriptedProvider([calls(call("t1", "cache_purge")), answer("ok")])
    async with make_runner(
        provider=provider,
        tools=toolset(*app_tools),
        store=store,
        events=sink,
        prompter=prompter,
        settings=settings,
    ) as runner:
        await runner.start("go")

    [asked] = prompter.questions
    assert isinstance(asked, ApprovalQuestion)
    assert asked.trigger == "impact:rw"


async def test_once_runs_the_call_and_asks_again_next_time(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    prompter = ScriptedPrompter([ApprovalChoice.ONCE, ApprovalChoice.NO])
    provider = ScriptedProvider(
        [
            calls(call("t1", "stream_rm", {"stream": "A"})),
            calls(call("t2", "stream_rm", {"stream": "B"})),
            answer("ok"),
        ]
    )
    async with make_runner(
        provider=provider, tools=toolset(*app_tools), store=store, events=sink, prompter=prompter
    ) as runner:
        result = await runner.start("go")

    first, second = results_of(await store.read(result.session_id))
    assert json.loads(first.content)["command"] == "stream rm -- A"
    assert json.loads(second.content)["allowed"] is False
    assert len(prompter.questions) == 2


async def test_always_is_journaled_after_the_result_and_stops_the_asking(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    prompter = ScriptedPrompter([ApprovalChoice.ALWAYS])
    provider = ScriptedProvider(
        [
            calls(
                call("t1", "stream_rm", {"stream": "A"}), call("t2", "stream_rm", {"stream": "B"})
            ),
            answer("ok"),
        ]
    )
    async with make_runner(
        provider=provider, tools=toolset(*app_tools), store=store, events=sink, prompter=prompter
    ) as runner:
        result = await runner.start("go")

    kinds = [type(payload).__name__ for payload in payloads(await store.read(result.session_id))]
    assert kinds == [
        "Meta",
        "Assistant",
        "ToolResult",
        "Decision",
        "ToolResult",
        "Assistant",
        "Terminal",
    ]
    assert Decision("stream_rm") in payloads(await store.read(result.session_id))
    assert len(prompter.questions) == 1


async def test_an_interrupt_at_the_approval_suspends_with_nothing_recorded_for_the_call(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    provider = ScriptedProvider([calls(call("t1", "stream_rm", {"stream": "A"}))])
    async with make_runner(
        provider=provider,
        tools=toolset(*app_tools),
        store=store,
        events=sink,
        prompter=ScriptedPrompter([INTERRUPT]),
    ) as runner:
        result = await runner.start("go")

    records = payloads(await store.read(result.session_id))
    assert isinstance(result.outcome, Suspended)
    assert not any(isinstance(payload, ToolResult | Decision) for payload in records)
    assert records[-1] == Terminal(TerminalReason.SUSPENDED, result.message)


async def test_an_interrupt_at_an_ask_human_question_suspends_the_run(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([calls(call("t1", "ask_human_confirm", {"question": "Go?"}))])
    async with make_runner(
        provider=provider,
        tools=toolset(AskHumanConfirm()),
        store=store,
        events=sink,
        prompter=ScriptedPrompter([INTERRUPT]),
    ) as runner:
        result = await runner.start("go")

    assert isinstance(result.outcome, Suspended)
    assert results_of(await store.read(result.session_id)) == []


async def test_the_timeout_text_is_in_place_before_post_tool_use(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    async def never_finishes(arguments: str, deps: ExecDeps) -> Outcome:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    seen: list[Outcome] = []

    async def observe(call: ToolUseBlock, outcome: Outcome) -> Outcome:
        seen.append(outcome)
        return outcome

    settings = dataclasses.replace(SETTINGS, tool_timeout=timedelta(milliseconds=20))
    provider = ScriptedProvider([calls(call("t1", "slow")), answer("ok")])
    async with make_runner(
        provider=provider,
        tools=toolset(FakeTool("slow", never_finishes)),
        store=store,
        events=sink,
        settings=settings,
        hooks=Hooks(post_tool_use=(observe,)),
    ) as runner:
        result = await runner.start("go")

    expected = 'tool "slow" did not finish within 20ms (harness.tool_timeout) and was stopped'
    assert seen == [Outcome(expected, is_error=True, timed_out=True)]
    assert results_of(await store.read(result.session_id)) == [
        ToolResultBlock("t1", expected, is_error=True)
    ]
    [shown] = sink.of(ToolResultEvent)
    assert shown.timed_out


async def test_an_operator_paced_tool_has_no_deadline(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    settings = dataclasses.replace(SETTINGS, tool_timeout=timedelta(microseconds=1))
    provider = ScriptedProvider(
        [calls(call("t1", "ask_human_confirm", {"question": "Go?"})), answer("ok")]
    )
    async with make_runner(
        provider=provider,
        tools=toolset(AskHumanConfirm()),
        store=store,
        events=sink,
        settings=settings,
        prompter=ScriptedPrompter([True]),
    ) as runner:
        result = await runner.start("go")

    assert results_of(await store.read(result.session_id)) == [
        ToolResultBlock("t1", '{"confirmed":true}')
    ]


async def test_the_assistant_turn_is_journaled_before_any_tool_runs(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    seen_last: list[object] = []
    runner_box: list[Runner] = []

    async def peek(arguments: str, deps: ExecDeps) -> Outcome:
        records = await store.read(runner_box[0].session_id)
        seen_last.append(records[-1].payload)
        return Outcome("looked")

    provider = ScriptedProvider([calls(call("t1", "peek")), answer("ok")])
    runner = make_runner(
        provider=provider, tools=toolset(FakeTool("peek", peek)), store=store, events=sink
    )
    runner_box.append(runner)
    async with runner:
        await runner.start("go")

    [last] = seen_last
    assert isinstance(last, Assistant)
    assert last.message.tool_uses == (ToolUseBlock("t1", "peek", "{}"),)


async def test_all_results_go_back_as_one_user_message(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([calls(call("t1", "a"), call("t2", "b")), answer("ok")])
    async with make_runner(
        provider=provider, tools=toolset(FakeTool("a"), FakeTool("b")), store=store, events=sink
    ) as runner:
        await runner.start("go")

    last = provider.requests[1].messages[-1]
    assert last.role is Role.USER
    assert [block.tool_use_id for block in last.content if isinstance(block, ToolResultBlock)] == [
        "t1",
        "t2",
    ]


async def test_tools_run_one_at_a_time_in_call_order(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    order: list[str] = []

    def recorder(name: str) -> FakeTool:
        async def record(arguments: str, deps: ExecDeps) -> Outcome:
            order.append(f"start {name}")
            await asyncio.sleep(0)
            order.append(f"end {name}")
            return Outcome(name)

        return FakeTool(name, record)

    provider = ScriptedProvider([calls(call("t1", "a"), call("t2", "b")), answer("ok")])
    async with make_runner(
        provider=provider, tools=toolset(recorder("a"), recorder("b")), store=store, events=sink
    ) as runner:
        await runner.start("go")

    assert order == ["start a", "end a", "start b", "end b"]


async def test_a_turn_stops_at_its_iteration_allowance(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    settings = dataclasses.replace(SETTINGS, max_iterations=2)
    provider = ScriptedProvider([calls(call("t1", "a")), calls(call("t2", "a"))])
    async with make_runner(
        provider=provider, tools=toolset(FakeTool("a")), store=store, events=sink, settings=settings
    ) as runner:
        result = await runner.start("go")

    assert isinstance(result.outcome, IterationsSpent)
    assert "llm.budget.max_iterations" in result.message
    assert provider.calls == 2
    assert payloads(await store.read(result.session_id))[-1].reason is (
        TerminalReason.MAX_ITERATIONS
    )


async def test_the_token_budget_stops_a_turn_before_its_tool_batch(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    tool = FakeTool("a")
    settings = dataclasses.replace(SETTINGS, max_tokens=50)
    provider = ScriptedProvider([calls(call("t1", "a"), tokens=30)])
    async with make_runner(
        provider=provider, tools=toolset(tool), store=store, events=sink, settings=settings
    ) as runner:
        result = await runner.start("go")

    assert isinstance(result.outcome, BudgetSpent)
    assert "llm.budget.max_tokens" in result.message
    assert tool.executed == []


async def test_an_answer_is_returned_even_past_the_token_budget(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    settings = dataclasses.replace(SETTINGS, max_tokens=50)
    provider = ScriptedProvider([answer("the answer", tokens=100)])
    async with make_runner(
        provider=provider, tools=toolset(), store=store, events=sink, settings=settings
    ) as runner:
        result = await runner.start("go")

    assert result.outcome == Completed("the answer")


async def test_the_tool_set_is_taken_once_per_model_call(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    current: list[ToolSet] = []

    async def shrink(arguments: str, deps: ExecDeps) -> Outcome:
        current[0] = toolset(FakeTool("first", shrink))
        return Outcome("shrunk")

    second = FakeTool("second")
    current.append(toolset(FakeTool("first", shrink), second))
    provider = ScriptedProvider([calls(call("t1", "first"), call("t2", "second")), answer("ok")])
    async with make_runner(
        provider=provider, tools=lambda: current[0], store=store, events=sink
    ) as runner:
        await runner.start("go")

    assert second.executed == ["{}"]
    assert [tool.name for tool in provider.requests[1].tools] == ["first"]


async def test_a_suspend_asked_by_a_running_tool_starts_no_later_call_of_its_batch(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    suspend = asyncio.Event()

    async def ask_to_stop(arguments: str, deps: ExecDeps) -> Outcome:
        suspend.set()
        return Outcome("stopping")

    later = FakeTool("later")
    provider = ScriptedProvider([calls(call("t1", "stop"), call("t2", "later")), answer("ok")])
    async with make_runner(
        provider=provider,
        tools=toolset(FakeTool("stop", ask_to_stop), later),
        store=store,
        events=sink,
        suspend=suspend,
    ) as runner:
        result = await runner.start("go")

    assert isinstance(result.outcome, Suspended)
    assert later.executed == []
    assert provider.calls == 1
    assert payloads(await store.read(result.session_id))[-1] == Terminal(TerminalReason.SUSPENDED)


async def test_a_reply_cut_off_at_the_output_limit_is_an_error_naming_the_setting(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([answer("half an ans", stop_reason="max_tokens")])
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as runner:
        result = await runner.start("go")

    assert isinstance(result.outcome, Failed)
    assert "llm.budget.max_output_tokens" in result.message


async def test_a_refusal_ends_the_run_as_a_refusal(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([answer("I cannot help with that", stop_reason="refusal")])
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as runner:
        result = await runner.start("go")

    assert isinstance(result.outcome, Declined)
    assert payloads(await store.read(result.session_id))[-1].reason is TerminalReason.ERROR
    # The journal's five reasons have no word for a refusal; its model turn keeps it.
    assert (await folded(store, result.session_id)).stop_reasons[-1] == "refusal"


async def test_a_paused_turn_is_continued_with_another_call(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([answer("searching", stop_reason="pause_turn"), answer("found")])
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as runner:
        result = await runner.start("go")

    assert result.outcome == Completed("found")
    assert provider.requests[1].messages[-1].role is Role.ASSISTANT


async def test_a_provider_failure_ends_the_run_with_its_sentence(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    failure = ProviderUnreachable("the Anthropic API could not be reached; check the network")
    async with make_runner(
        provider=ScriptedProvider([failure]), tools=toolset(), store=store, events=sink
    ) as runner:
        result = await runner.start("go")

    assert result.outcome == Failed(str(failure))


async def test_events_report_the_call_its_result_status_thinking_and_answer(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    provider = ScriptedProvider(
        [
            calls(call("t1", "status"), text="checking", thinking="hmm"),
            answer("all good"),
        ]
    )
    async with make_runner(
        provider=provider, tools=toolset(*app_tools), store=store, events=sink
    ) as runner:
        await runner.start("go")

    assert [type(event).__name__ for event in sink.events] == [
        "StatusEvent",
        "ThinkingEvent",
        "TextEvent",
        "ToolCallEvent",
        "ToolResultEvent",
        "StatusEvent",
        "TextEvent",
    ]
    assert sink.of(StatusEvent)[0].phase == "calling-llm"
    assert sink.of(ThinkingEvent)[0].text == "hmm"
    assert sink.of(TextEvent) == [TextEvent("checking"), TextEvent("all good", final=True)]
    assert sink.of(ToolCallEvent)[0].command == ("status",)
    [result] = sink.of(ToolResultEvent)
    assert result.exec is not None and result.exec.command == "status"


async def test_only_a_tool_that_asks_the_operator_is_lent_the_prompter(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    plain = FakeTool("plain")
    prompter = ScriptedPrompter([True])
    provider = ScriptedProvider(
        [
            calls(call("t1", "plain"), call("t2", "ask_human_confirm", {"question": "Go?"})),
            answer("ok"),
        ]
    )
    async with make_runner(
        provider=provider,
        tools=toolset(plain, AskHumanConfirm()),
        store=store,
        events=sink,
        prompter=prompter,
    ) as runner:
        await runner.start("go")

    assert plain.deps_seen[0].prompter is None
    assert prompter.questions == [ConfirmQuestion("Go?")]


async def test_a_command_runs_in_the_configured_work_directory(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    settings = dataclasses.replace(SETTINGS, work_dir=work)
    provider = ScriptedProvider([calls(call("t1", "status")), answer("ok")])
    async with make_runner(
        provider=provider, tools=toolset(*app_tools), store=store, events=sink, settings=settings
    ) as runner:
        result = await runner.start("go")

    [ran] = results_of(await store.read(result.session_id))
    assert json.loads(json.loads(ran.content)["output"])["cwd"] == str(work)


async def test_a_large_tool_set_is_deferred_when_the_provider_searches(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    tools = toolset(*(FakeTool(f"tool{index}") for index in range(10)), AskHumanConfirm())
    provider = ScriptedProvider([answer("ok")], tool_search=True)
    async with make_runner(provider=provider, tools=tools, store=store, events=sink) as runner:
        await runner.start("go")

    [request] = provider.requests
    deferred = {definition.name: definition.defer_loading for definition in request.tools}
    assert deferred["tool0"] and not deferred["ask_human_confirm"]
    assert request.tool_search


async def test_a_large_tool_set_without_tool_search_warns_once(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    tools = toolset(*(FakeTool(f"tool{index}") for index in range(10)))
    provider = ScriptedProvider([calls(call("t1", "tool0")), answer("ok")])
    async with make_runner(provider=provider, tools=tools, store=store, events=sink) as runner:
        await runner.start("go")

    assert sink.of(WarningEvent) == [
        WarningEvent(WarningKind.TOOLS_SENT_DIRECTLY, name="llm.provider", count=10)
    ]


async def test_a_model_without_tool_search_gets_every_tool_loaded_and_the_warning_names_it(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    tools = toolset(*(FakeTool(f"tool{index}") for index in range(10)))
    provider = ScriptedProvider([answer("ok")], tool_search=True)
    settings = dataclasses.replace(SETTINGS, model="claude-opus-4-1-20250805")
    async with make_runner(
        provider=provider, tools=tools, store=store, events=sink, settings=settings
    ) as runner:
        await runner.start("go")

    [request] = provider.requests
    assert not request.tool_search
    assert not any(definition.defer_loading for definition in request.tools)
    assert sink.of(WarningEvent) == [
        WarningEvent(WarningKind.TOOLS_SENT_DIRECTLY, name="llm.model", count=10)
    ]


async def test_a_raising_hook_ends_the_run_once_with_a_terminal_error(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    async def explode(call: ToolUseBlock, outcome: Outcome) -> Outcome:
        raise RuntimeError("hook bug")

    provider = ScriptedProvider([calls(call("t1", "a"), call("t2", "b"))])
    b = FakeTool("b")
    runner = make_runner(
        provider=provider,
        tools=toolset(FakeTool("a"), b),
        store=store,
        events=sink,
        hooks=Hooks(post_tool_use=(explode,)),
    )
    async with runner:
        with pytest.raises(AgentError) as raised:
            await runner.start("go")
        session_id = runner.session_id

    message = str(raised.value)
    assert message.startswith("a PostToolUse hook failed with RuntimeError: hook bug")
    assert "Traceback" not in message
    terminals = [p for p in payloads(await store.read(session_id)) if isinstance(p, Terminal)]
    assert terminals == [Terminal(TerminalReason.ERROR, message)]
    assert b.executed == []


async def test_the_stack_of_a_crash_reaches_the_sink_only_when_verbose(
    store: FileSessionStore,
) -> None:
    async def explode(arguments: str, deps: ExecDeps) -> Outcome:
        raise ValueError("tool bug")

    for verbose in (False, True):
        sink = RecordingSink()
        runner = make_runner(
            provider=ScriptedProvider([calls(call("t1", "boom"))]),
            tools=toolset(FakeTool("boom", explode)),
            store=store,
            events=sink,
            settings=dataclasses.replace(SETTINGS, verbose=verbose),
        )
        async with runner:
            with pytest.raises(AgentError, match='tool "boom" failed with ValueError'):
                await runner.start("go")
        stacks = [event.error for event in sink.of(WarningEvent)]
        assert bool(stacks) is verbose
        assert all("Traceback" in stack for stack in stacks)


async def test_an_allow_decision_keeps_the_call_as_the_model_made_it(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    async def allow(call: ToolUseBlock) -> PreToolDecision:
        return Allow()

    tool = FakeTool("a")
    provider = ScriptedProvider([calls(call("t1", "a", {"x": 1})), answer("ok")])
    async with make_runner(
        provider=provider,
        tools=toolset(tool),
        store=store,
        events=sink,
        hooks=Hooks(pre_tool_use=(allow,)),
    ) as runner:
        await runner.start("go")

    assert tool.executed == ['{"x": 1}']
