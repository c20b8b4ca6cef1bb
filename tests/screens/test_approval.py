"""The approval modal on its own: how the command reads, what Always says, the shortcuts, and
No with the operator's sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Button, Input

from fisk_ai.llm.types import ToolResultBlock
from fisk_ai.screens.approval import ApprovalScreen
from fisk_ai.sessions import ToolResult
from fisk_ai.tools.questions import ApprovalChoice, ApprovalQuestion, DeclineWithReason
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.screens.answerable import until_answerable
from tests.screens.screen_host import SIZE, UNANSWERED, ScreenHost
from tests.tui.workstation import build_app

HOSTILE = "prod; rm -rf / $(whoami)"


def approval(*arguments: str) -> ApprovalQuestion:
    argv = ("stream", "rm", "--", *arguments)
    return ApprovalQuestion("t1", "stream_rm", "stream rm", " ".join(argv), "ai:confirm", argv)


def shown(app: App[None], selector: str) -> str:
    return str(app.screen.query_one(selector).render())


def command_lines(app: App[None]) -> list[str]:
    return [line.rstrip() for line in shown(app, "#approval-command").splitlines()]


async def test_a_hostile_argument_reads_as_one_quoted_argument() -> None:
    app = ScreenHost(ApprovalScreen(approval(HOSTILE)))
    async with app.run_test(size=(80, 24)):
        assert command_lines(app) == ["-> stream rm -- 'prod; rm -rf / $(whoami)'"]


async def test_a_command_too_long_for_the_modal_shows_one_argument_a_line() -> None:
    arguments = [f"consumer-{number:02d}" for number in range(8)]
    app = ScreenHost(ApprovalScreen(approval(*arguments, HOSTILE)))
    async with app.run_test(size=(80, 24)):
        lines = command_lines(app)
        assert lines[0] == "-> stream rm"
        assert [line.strip() for line in lines[1:]] == ["--", *arguments, f"'{HOSTILE}'"]


async def test_a_command_that_fits_stays_on_one_line() -> None:
    app = ScreenHost(ApprovalScreen(approval("ORDERS")))
    async with app.run_test(size=(80, 24)):
        assert command_lines(app) == ["-> stream rm -- ORDERS"]


async def test_control_characters_are_stripped_and_markup_shown_as_typed() -> None:
    app = ScreenHost(ApprovalScreen(approval("[bold]x\x1b[2J[/]\nnext")))
    async with app.run_test(size=SIZE):
        text = shown(app, "#approval-command")
        assert "'[bold]x[/] next'" in text
        assert "\x1b" not in text
        assert '"stream rm" carries tag "ai:confirm"' in shown(app, "#approval-tag")


async def test_a_question_without_an_argument_vector_shows_its_display_line() -> None:
    question = ApprovalQuestion("t1", "stream_rm", "stream rm", "stream rm ORDERS", "ai:confirm")
    app = ScreenHost(ApprovalScreen(question))
    async with app.run_test(size=SIZE):
        assert command_lines(app) == ["-> stream rm ORDERS"]


async def test_always_says_it_covers_any_arguments_for_the_rest_of_the_conversation() -> None:
    app = ScreenHost(ApprovalScreen(approval("ORDERS")))
    async with app.run_test(size=(160, 45)):
        assert shown(app, "#approval-scope") == (
            'Always: run "stream rm" with any arguments, without asking, '
            "for the rest of this conversation."
        )


async def test_the_buttons_show_their_shortcuts_with_no_first_and_focused() -> None:
    app = ScreenHost(ApprovalScreen(approval("ORDERS")))
    async with app.run_test(size=(80, 24)):
        labels = [str(button.label) for button in app.screen.query(Button)]
        assert labels == ["No 1/n", "Once 2/y", "Always 3/a", "No, tell why 4/t"]
        focused = app.focused
        assert isinstance(focused, Button) and focused.id == "approval-no"


async def test_enter_on_an_approval_declines() -> None:
    app = ScreenHost(ApprovalScreen(approval("ORDERS")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press("enter")
    assert app.answer is ApprovalChoice.NO


async def test_always_is_two_to_the_right_of_no() -> None:
    app = ScreenHost(ApprovalScreen(approval("ORDERS")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press("right", "right", "enter")
    assert app.answer is ApprovalChoice.ALWAYS


@pytest.mark.parametrize(
    ("key", "choice"),
    [
        ("1", ApprovalChoice.NO),
        ("n", ApprovalChoice.NO),
        ("escape", ApprovalChoice.NO),
        ("2", ApprovalChoice.ONCE),
        ("y", ApprovalChoice.ONCE),
        ("3", ApprovalChoice.ALWAYS),
        ("a", ApprovalChoice.ALWAYS),
    ],
)
async def test_each_shortcut_answers_with_its_choice(key: str, choice: ApprovalChoice) -> None:
    app = ScreenHost(ApprovalScreen(approval("ORDERS")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press(key)
    assert app.answer is choice


@pytest.mark.parametrize("key", ["4", "t"])
async def test_tell_why_declines_with_the_sentence_typed(key: str) -> None:
    app = ScreenHost(ApprovalScreen(approval("ORDERS")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press(key)
        reason = app.screen.query_one("#approval-reason", Input)
        assert reason.has_focus
        await pilot.press(*"use staging")
        await pilot.press("enter")
    assert app.answer == DeclineWithReason("use staging")


async def test_an_empty_sentence_is_a_plain_no() -> None:
    app = ScreenHost(ApprovalScreen(approval("ORDERS")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press("t", "space", "enter")
    assert app.answer is ApprovalChoice.NO


async def test_escape_in_the_sentence_goes_back_to_the_buttons() -> None:
    app = ScreenHost(ApprovalScreen(approval("ORDERS")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press("t", "o", "k", "escape")
        await pilot.pause()
        assert app.answer is UNANSWERED
        focused = app.focused
        assert isinstance(focused, Button) and focused.id == "approval-no"
        assert not app.screen.query_one("#approval-reason", Input).display


async def test_a_decline_with_a_sentence_is_the_journaled_result_the_model_reads(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(
        [calls(call("t1", "stream_rm", {"stream": HOSTILE})), answer("I will use staging")]
    )
    app, agent = build_app(tmp_path, provider, prompt="remove the prod stream")
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            while not isinstance(app.screen, ApprovalScreen):
                await pilot.pause()
            await until_answerable(app)
            await pilot.press("t", *"use the staging cluster", "enter")
            while app.run_screen.turn_running:
                await pilot.pause()
            records = await agent.store.read(app.bridge.session_id)
    finally:
        await agent.close()
    [journaled] = [
        record.payload.result for record in records if isinstance(record.payload, ToolResult)
    ]
    assert json.loads(journaled.content) == {
        "allowed": False,
        "reason": f'the operator declined to run "stream rm -- {HOSTILE}" and said: '
        '"use the staging cluster"; this decision is final, do not retry',
    }
    read_by_the_model = [
        block
        for block in provider.requests[1].messages[-1].content
        if isinstance(block, ToolResultBlock)
    ]
    assert read_by_the_model == [journaled]
