"""A runner holding a served conversation: a changed tool set lets the turn run but forgets the
standing approvals, the token allowance the conversation was started under stays its own, and
a turn it is left on after an answer is journaled completed, yet takes the next prompt."""

from __future__ import annotations

import dataclasses

import pytest

from fisk_ai.agent.outcome import BudgetSpent
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner, SessionCompleted
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.llm.types import Provider
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.records import Terminal, TerminalReason
from fisk_ai.tools.base import Tool
from fisk_ai.tools.questions import ApprovalChoice, Prompter
from fisk_ai.tools.toolset import ToolSet
from tests.agent.conftest import SETTINGS, FakeTool, folded, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.prompter import ScriptedPrompter
from tests.fakes.provider import ScriptedProvider, answer, call, calls

INTERACTIVE = dataclasses.replace(SETTINGS, interactive=True)


def conversation_runner(
    store: FileSessionStore,
    provider: Provider,
    tools: ToolSet,
    *,
    prompter: Prompter | None = None,
    settings: AgentSettings = INTERACTIVE,
) -> Runner:
    return Runner(
        Resources(settings, provider, tools, store),
        events=RecordingSink(),
        prompter=prompter,
        conversation=True,
    )


async def test_a_changed_tool_set_forgets_the_standing_approvals_without_force(
    store: FileSessionStore, app_tools: tuple[Tool, ...]
) -> None:
    remove_a = ScriptedProvider([calls(call("t1", "stream_rm", {"stream": "A"})), answer("ok")])
    granting = ScriptedPrompter([ApprovalChoice.ALWAYS])
    async with conversation_runner(
        store, remove_a, toolset(*app_tools), prompter=granting
    ) as runner:
        first = await runner.start("remove A")

    remove_b = ScriptedProvider([calls(call("t2", "stream_rm", {"stream": "B"})), answer("ok")])
    asked = ScriptedPrompter([ApprovalChoice.ONCE])
    async with conversation_runner(
        store, remove_b, toolset(*app_tools, FakeTool("new")), prompter=asked
    ) as redeployed:
        result = await redeployed.follow_up_stored(first.session_id, "remove B")

    assert result.answer == "ok"
    assert len(asked.questions) == 1


async def test_the_allowance_a_conversation_started_with_outlasts_a_larger_configuration(
    store: FileSessionStore,
) -> None:
    started = dataclasses.replace(INTERACTIVE, max_tokens=30)
    async with conversation_runner(
        store, ScriptedProvider([answer("two")]), toolset(), settings=started
    ) as runner:
        first = await runner.start("how many streams")

    async with conversation_runner(
        store, ScriptedProvider([answer("still two")]), toolset()
    ) as later:
        second = await later.follow_up_stored(first.session_id, "and now")
        third = await later.follow_up("and again")

    assert second.answer == "still two"
    assert isinstance(third.outcome, BudgetSpent)
    assert "allowance of 30" in third.message


async def test_a_conversation_left_on_an_answer_is_journaled_completed_and_resumes(
    store: FileSessionStore,
) -> None:
    async with conversation_runner(store, ScriptedProvider([answer("two")]), toolset()) as runner:
        first = await runner.start("how many streams")
    resting = (await folded(store, first.session_id)).terminal

    async with conversation_runner(
        store, ScriptedProvider([answer("still two")]), toolset()
    ) as later:
        second = await later.follow_up_stored(first.session_id, "and now")

    assert resting == Terminal(TerminalReason.COMPLETED)
    assert second.answer == "still two"


async def test_a_completed_run_that_was_not_interactive_still_refuses_a_resume(
    store: FileSessionStore,
) -> None:
    single = dataclasses.replace(SETTINGS, interactive=False)
    async with conversation_runner(
        store, ScriptedProvider([answer("two")]), toolset(), settings=single
    ) as runner:
        first = await runner.start("how many streams")

    with pytest.raises(SessionCompleted):
        await conversation_runner(store, ScriptedProvider(), toolset()).resume(first.session_id)
