import asyncio
import dataclasses
from datetime import timedelta
from pathlib import Path

import pytest

from fisk_ai import config
from fisk_ai.agent.hooks import Deny, Hooks
from fisk_ai.agent.loop import AgentError
from fisk_ai.agent.outcome import BudgetSpent, Completed, Suspended
from fisk_ai.agent.prompt import RESUME_REMINDER
from fisk_ai.agent.runner import PromptDenied, SessionCompleted
from fisk_ai.agent.settings import settings_from_config
from fisk_ai.llm.types import Role, ThinkingMode, ToolResultBlock, user_text
from fisk_ai.sessions.errors import ResumeRefused
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.records import (
    Claim,
    Meta,
    Terminal,
    TerminalReason,
    ToolResult,
    User,
)
from fisk_ai.tools.base import ExecDeps, Outcome, Tool
from fisk_ai.tools.questions import ApprovalChoice
from fisk_ai.util.ids import KSUID_LENGTH
from tests.agent.conftest import SETTINGS, FakeTool, folded, make_runner, payloads, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.prompter import INTERRUPT, ScriptedPrompter
from tests.fakes.provider import ScriptedProvider, answer, call, calls


class Crash(BaseException):
    """Stands in for the process dying: nothing in the runner catches it."""


async def suspended_session(store: FileSessionStore, **settings: object) -> str:
    """A session suspended before its first model call."""
    suspend = asyncio.Event()
    suspend.set()
    runner = make_runner(
        provider=ScriptedProvider(),
        tools=toolset(FakeTool("a")),
        store=store,
        events=RecordingSink(),
        settings=dataclasses.replace(SETTINGS, **settings),  # type: ignore[arg-type]
        suspend=suspend,
    )
    async with runner:
        result = await runner.start("go")
    return result.session_id


async def test_a_new_session_gets_a_ksuid_and_a_meta_record(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([answer("hi")])
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as runner:
        result = await runner.start("hello")

    [meta, *_] = payloads(await store.read(result.session_id))
    assert len(result.session_id) == KSUID_LENGTH
    assert isinstance(meta, Meta)
    assert (meta.prompt, meta.fingerprint.model, meta.fingerprint.provider) == (
        "hello",
        "test-model",
        "scripted",
    )


async def test_a_named_session_is_journaled_under_its_name(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    async with make_runner(
        provider=ScriptedProvider([answer("hi")]), tools=toolset(), store=store, events=sink
    ) as runner:
        result = await runner.start("hello", session_id="nightly-report")

    assert result.session_id == "nightly-report"
    assert (await folded(store, "nightly-report")).completed


async def test_the_result_counts_come_from_the_journal(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([calls(call("t1", "a"), call("t2", "a"), tokens=5), answer("ok")])
    async with make_runner(
        provider=provider, tools=toolset(FakeTool("a")), store=store, events=sink
    ) as runner:
        result = await runner.start("go")

    assert (result.llm_calls, result.tool_calls, result.usage.processed) == (2, 2, 30)


async def test_a_rewritten_prompt_is_the_one_journaled_and_sent(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    async def polite(prompt: str) -> str:
        return f"please {prompt}"

    provider = ScriptedProvider([answer("ok")])
    async with make_runner(
        provider=provider,
        tools=toolset(),
        store=store,
        events=sink,
        hooks=Hooks(user_prompt_submit=(polite,)),
    ) as runner:
        result = await runner.start("go")

    assert (await folded(store, result.session_id)).first_prompt == "please go"
    assert provider.requests[0].messages[0] == user_text("please go")


async def test_a_denied_prompt_starts_nothing(store: FileSessionStore, sink: RecordingSink) -> None:
    async def refuse(prompt: str) -> str | Deny:
        return Deny("contains a secret")

    provider = ScriptedProvider()
    runner = make_runner(
        provider=provider,
        tools=toolset(),
        store=store,
        events=sink,
        hooks=Hooks(user_prompt_submit=(refuse,)),
    )
    with pytest.raises(PromptDenied, match="contains a secret"):
        await runner.start("go")

    assert await store.list() == []
    assert provider.calls == 0


async def test_a_crash_mid_batch_resumes_running_only_the_unanswered_call(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    crashing = [True]

    async def fragile(arguments: str, deps: ExecDeps) -> Outcome:
        if crashing[0]:
            raise Crash
        return Outcome("second done")

    first, second = FakeTool("first"), FakeTool("second", fragile)
    tools = toolset(first, second)
    runner = make_runner(
        provider=ScriptedProvider([calls(call("t1", "first"), call("t2", "second"))]),
        tools=tools,
        store=store,
        events=sink,
    )
    with pytest.raises(Crash):
        await runner.start("go")
    session_id = runner.session_id
    await runner.close()

    crashing[0] = False
    provider = ScriptedProvider([answer("all done")])
    async with make_runner(provider=provider, tools=tools, store=store, events=sink) as resumed:
        result = await resumed.resume(session_id)

    assert result.outcome == Completed("all done")
    assert (len(first.executed), len(second.executed)) == (1, 2)
    assert provider.calls == 1
    results = provider.requests[0].messages[-1].content
    assert [block.tool_use_id for block in results if isinstance(block, ToolResultBlock)] == [
        "t1",
        "t2",
    ]


async def test_a_clean_suspend_resumes_with_nothing_repeated(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    suspend = asyncio.Event()

    async def work(arguments: str, deps: ExecDeps) -> Outcome:
        suspend.set()
        return Outcome("worked")

    tool = FakeTool("work", work)
    first_provider = ScriptedProvider([calls(call("t1", "work"))])
    async with make_runner(
        provider=first_provider, tools=toolset(tool), store=store, events=sink, suspend=suspend
    ) as runner:
        suspended = await runner.start("go")

    second_provider = ScriptedProvider([answer("done")])
    async with make_runner(
        provider=second_provider, tools=toolset(tool), store=store, events=sink
    ) as resumed:
        result = await resumed.resume(suspended.session_id)

    assert isinstance(suspended.outcome, Suspended)
    assert result.answer == "done"
    assert (first_provider.calls, second_provider.calls, len(tool.executed)) == (1, 1, 1)
    assert (result.llm_calls, result.tool_calls) == (2, 1)


async def test_an_interrupted_approval_is_asked_again_on_resume(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    tools = toolset(*app_tools)
    async with make_runner(
        provider=ScriptedProvider([calls(call("t1", "stream_rm", {"stream": "A"}))]),
        tools=tools,
        store=store,
        events=sink,
        prompter=ScriptedPrompter([INTERRUPT]),
    ) as runner:
        suspended = await runner.start("go")

    prompter = ScriptedPrompter([ApprovalChoice.ONCE])
    async with make_runner(
        provider=ScriptedProvider([answer("removed")]),
        tools=tools,
        store=store,
        events=sink,
        prompter=prompter,
    ) as resumed:
        result = await resumed.resume(suspended.session_id)

    assert result.answer == "removed"
    assert len(prompter.questions) == 1
    assert result.tool_calls == 1


async def test_a_resume_claims_the_session_before_anything_else(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    session_id = await suspended_session(store)
    before = len(await store.read(session_id))

    async with make_runner(
        provider=ScriptedProvider([answer("ok")]),
        tools=toolset(FakeTool("a")),
        store=store,
        events=sink,
    ) as runner:
        await runner.resume(session_id)

    assert isinstance((await store.read(session_id))[before].payload, Claim)


async def test_a_resumed_run_reminds_the_model_that_results_may_be_stale(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    session_id = await suspended_session(store, system_prompt="You run ops.")
    provider = ScriptedProvider([answer("ok")])

    async with make_runner(
        provider=provider,
        tools=toolset(FakeTool("a")),
        store=store,
        events=sink,
        settings=dataclasses.replace(SETTINGS, system_prompt="You run ops."),
    ) as runner:
        await runner.resume(session_id)

    assert provider.requests[0].system == ("You run ops.", RESUME_REMINDER)


async def test_a_changed_model_is_refused_naming_it(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    session_id = await suspended_session(store)
    runner = make_runner(
        provider=ScriptedProvider(),
        tools=toolset(FakeTool("a")),
        store=store,
        events=sink,
        settings=dataclasses.replace(SETTINGS, model="other-model"),
    )

    with pytest.raises(ResumeRefused, match="model: test-model -> other-model"):
        await runner.resume(session_id)


async def test_force_continues_across_a_changed_model(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    session_id = await suspended_session(store)
    provider = ScriptedProvider([answer("ok")])

    async with make_runner(
        provider=provider,
        tools=toolset(FakeTool("a")),
        store=store,
        events=sink,
        settings=dataclasses.replace(SETTINGS, model="other-model"),
    ) as runner:
        result = await runner.resume(session_id, force=True)

    assert result.answer == "ok"
    assert provider.requests[0].model == "other-model"


async def test_a_changed_provider_is_refused_even_with_force(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    session_id = await suspended_session(store)
    runner = make_runner(
        provider=ScriptedProvider(provider="elsewhere"),
        tools=toolset(FakeTool("a")),
        store=store,
        events=sink,
    )

    with pytest.raises(ResumeRefused, match="--force"):
        await runner.resume(session_id, force=True)


async def test_a_completed_session_cannot_be_resumed(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    async with make_runner(
        provider=ScriptedProvider([answer("done")]), tools=toolset(), store=store, events=sink
    ) as runner:
        result = await runner.start("go")

    with pytest.raises(SessionCompleted, match=result.session_id):
        await make_runner(
            provider=ScriptedProvider(), tools=toolset(), store=store, events=sink
        ).resume(result.session_id)


async def test_a_standing_grant_is_honored_on_resume(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    tools = toolset(*app_tools)
    provider = ScriptedProvider(
        [calls(call("t1", "stream_rm", {"stream": "A"})), answer("first done")]
    )
    async with make_runner(
        provider=provider,
        tools=tools,
        store=store,
        events=sink,
        prompter=ScriptedPrompter([ApprovalChoice.ALWAYS]),
        settings=dataclasses.replace(SETTINGS, interactive=True),
    ) as runner:
        first = await runner.start("go")

    prompter = ScriptedPrompter()
    async with make_runner(
        provider=ScriptedProvider([calls(call("t2", "stream_rm", {"stream": "B"})), answer("ok")]),
        tools=tools,
        store=store,
        events=sink,
        prompter=prompter,
        settings=dataclasses.replace(SETTINGS, interactive=True),
    ) as resumed:
        await resumed.resume(first.session_id)
        result = await resumed.follow_up("remove B too")

    assert result.answer == "ok"
    assert prompter.questions == []


async def test_a_forced_resume_across_a_changed_tool_set_forgets_standing_grants(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    interactive = dataclasses.replace(SETTINGS, interactive=True)
    async with make_runner(
        provider=ScriptedProvider([calls(call("t1", "stream_rm", {"stream": "A"})), answer("ok")]),
        tools=toolset(*app_tools),
        store=store,
        events=sink,
        prompter=ScriptedPrompter([ApprovalChoice.ALWAYS]),
        settings=interactive,
    ) as runner:
        first = await runner.start("go")

    prompter = ScriptedPrompter([ApprovalChoice.NO])
    async with make_runner(
        provider=ScriptedProvider([calls(call("t2", "stream_rm", {"stream": "B"})), answer("ok")]),
        tools=toolset(*app_tools, FakeTool("new")),
        store=store,
        events=sink,
        prompter=prompter,
        settings=interactive,
    ) as resumed:
        await resumed.resume(first.session_id, force=True)
        await resumed.follow_up("remove B")

    assert len(prompter.questions) == 1


async def test_a_resume_with_nobody_present_declines_a_granted_command(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    interactive = dataclasses.replace(SETTINGS, interactive=True)
    async with make_runner(
        provider=ScriptedProvider([calls(call("t1", "stream_rm", {"stream": "A"})), answer("ok")]),
        tools=toolset(*app_tools),
        store=store,
        events=sink,
        prompter=ScriptedPrompter([ApprovalChoice.ALWAYS]),
        settings=interactive,
    ) as runner:
        first = await runner.start("go")

    async with make_runner(
        provider=ScriptedProvider([calls(call("t2", "stream_rm", {"stream": "B"})), answer("ok")]),
        tools=toolset(*app_tools),
        store=store,
        events=sink,
        settings=interactive,
    ) as resumed:
        await resumed.resume(first.session_id)
        result = await resumed.follow_up("remove B")

    records = payloads(await store.read(result.session_id))
    last_result = [p for p in records if isinstance(p, ToolResult)][-1]
    assert '"allowed":false' in last_result.result.content


async def test_a_follow_up_is_journaled_and_gets_a_fresh_allowance(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    settings = dataclasses.replace(SETTINGS, max_iterations=2)
    provider = ScriptedProvider(
        [calls(call("t1", "a")), answer("first"), calls(call("t2", "a")), answer("second")]
    )
    async with make_runner(
        provider=provider, tools=toolset(FakeTool("a")), store=store, events=sink, settings=settings
    ) as runner:
        await runner.start("one")
        result = await runner.follow_up("two")

    assert result.outcome == Completed("second")
    assert User(user_text("two")) in payloads(await store.read(result.session_id))
    assert provider.requests[2].messages[-1] == user_text("two")


async def test_a_follow_up_past_the_token_budget_is_refused_unrecorded(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    settings = dataclasses.replace(SETTINGS, max_tokens=50)
    provider = ScriptedProvider([answer("big", tokens=40)])
    async with make_runner(
        provider=provider, tools=toolset(), store=store, events=sink, settings=settings
    ) as runner:
        first = await runner.start("one")
        result = await runner.follow_up("two")

    assert isinstance(first.outcome, Completed)
    assert isinstance(result.outcome, BudgetSpent)
    assert provider.calls == 1
    assert not any(isinstance(p, User) for p in payloads(await store.read(result.session_id)))


async def test_an_interactive_turn_leaves_no_terminal_until_the_conversation_closes(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    runner = make_runner(
        provider=ScriptedProvider([answer("hi")]),
        tools=toolset(),
        store=store,
        events=sink,
        settings=dataclasses.replace(SETTINGS, interactive=True),
    )
    result = await runner.start("hello")
    open_status = (await folded(store, result.session_id)).terminal
    await runner.close()

    assert open_status is None
    assert (await folded(store, result.session_id)).terminal == Terminal(TerminalReason.SUSPENDED)


async def test_an_interactive_conversation_resumes_at_its_last_answer(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    interactive = dataclasses.replace(SETTINGS, interactive=True)
    async with make_runner(
        provider=ScriptedProvider([answer("hi")]),
        tools=toolset(),
        store=store,
        events=sink,
        settings=interactive,
    ) as runner:
        first = await runner.start("hello")

    provider = ScriptedProvider([answer("again")])
    async with make_runner(
        provider=provider, tools=toolset(), store=store, events=sink, settings=interactive
    ) as resumed:
        at_rest = await resumed.resume(first.session_id)
        follow = await resumed.follow_up("more")

    assert at_rest.outcome == Completed("hi")
    assert follow.answer == "again"
    assert provider.calls == 1
    assert [message.role for message in provider.requests[0].messages] == [
        Role.USER,
        Role.ASSISTANT,
        Role.USER,
    ]


async def test_a_raising_prompt_hook_on_a_follow_up_ends_the_run_with_a_terminal_error(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    calls_seen: list[str] = []

    async def second_time_fails(prompt: str) -> str:
        calls_seen.append(prompt)
        if len(calls_seen) > 1:
            raise RuntimeError("policy store unreachable")
        return prompt

    runner = make_runner(
        provider=ScriptedProvider([answer("hi")]),
        tools=toolset(),
        store=store,
        events=sink,
        hooks=Hooks(user_prompt_submit=(second_time_fails,)),
    )
    async with runner:
        first = await runner.start("one")
        with pytest.raises(AgentError, match="UserPromptSubmit hook failed"):
            await runner.follow_up("two")

    terminal = (await folded(store, first.session_id)).terminal
    assert terminal is not None
    assert terminal.reason is TerminalReason.ERROR


def test_settings_come_from_the_configuration() -> None:
    cfg = config.Config.model_validate(
        {
            "system_prompt": "You run ops.",
            "harness": {"confirm_tags": ["impact:rw"], "tool_timeout": "0s"},
            "llm": {
                "model": "claude-test",
                "thinking": {"enabled": True},
                "no_prompt_cache": True,
                "budget": {"max_tokens": 1000, "max_iterations": 7, "call_timeout": "30s"},
            },
        }
    )

    settings = settings_from_config(cfg, interactive=True, work_dir=Path("/srv"))

    assert settings.model == "claude-test"
    assert settings.system_prompt == "You run ops."
    assert (settings.max_tokens, settings.max_iterations) == (1000, 7)
    assert settings.call_timeout == timedelta(seconds=30)
    assert settings.thinking is ThinkingMode.ON
    assert not settings.prompt_cache
    assert settings.confirm_tags == ("impact:rw",)
    assert settings.tool_timeout is None
    assert settings.interactive
    assert settings.work_dir == Path("/srv")


def test_unset_thinking_sends_no_thinking_parameter() -> None:
    cfg = config.Config.model_validate({"llm": {"model": "m"}})

    assert settings_from_config(cfg).thinking is ThinkingMode.UNSET


def test_every_llm_and_pii_key_reaches_the_run_settings() -> None:
    cfg = config.Config.model_validate(
        {
            "harness": {"pii": {"mode": "reject"}},
            "llm": {
                "model": "m",
                "thinking": {"enabled": False},
                "reasoning_effort": "high",
                "no_tool_search": True,
                "budget": {"max_output_tokens": 2048},
            },
        }
    )

    settings = settings_from_config(cfg)

    assert settings.thinking is ThinkingMode.OFF
    assert settings.reasoning_effort == "high"
    assert settings.no_tool_search
    assert settings.max_output_tokens == 2048
    assert settings.pii_mode is config.PiiMode.REJECT
