from __future__ import annotations

from textual.app import App
from textual.widgets import Button, Input, OptionList

from fisk_ai.screens.approval import ApprovalScreen
from fisk_ai.screens.question import ConfirmScreen, InputScreen, SelectScreen
from fisk_ai.tools.questions import (
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    InputQuestion,
    SelectQuestion,
)
from tests.screens.screen_host import SIZE, ScreenHost


def approval(display: str = "stream rm -- ORDERS") -> ApprovalQuestion:
    return ApprovalQuestion("t1", "stream_rm", "stream rm", display, "ai:confirm")


def shown(app: App[None], selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def test_enter_on_an_approval_declines() -> None:
    app = ScreenHost(ApprovalScreen(approval()))
    async with app.run_test(size=SIZE) as pilot:
        focused = app.focused
        assert isinstance(focused, Button) and str(focused.label) == "No"
        await pilot.press("enter")
    assert app.answer is ApprovalChoice.NO


async def test_always_is_two_to_the_right_of_no() -> None:
    app = ScreenHost(ApprovalScreen(approval()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right", "right", "enter")
    assert app.answer is ApprovalChoice.ALWAYS


async def test_an_approval_shows_control_characters_stripped_and_markup_as_typed() -> None:
    app = ScreenHost(ApprovalScreen(approval("stream rm -- [bold]x\x1b[2J[/]")))
    async with app.run_test(size=SIZE):
        text = shown(app, "#approval-command")
        assert "[bold]x" in text and "[/]" in text
        assert "\x1b" not in text
        assert '"stream rm" carries tag "ai:confirm"' in shown(app, "#approval-tag")


async def test_a_confirm_defaults_to_no_and_yes_is_to_its_right() -> None:
    app = ScreenHost(ConfirmScreen(ConfirmQuestion("delete [0] things?")))
    async with app.run_test(size=SIZE) as pilot:
        assert "delete [0] things?" in shown(app, "#question-text")
        await pilot.press("right", "enter")
    assert app.answer is True


async def test_escape_answers_a_confirm_with_no() -> None:
    app = ScreenHost(ConfirmScreen(ConfirmQuestion("sure?")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
    assert app.answer is False


async def test_a_select_answers_with_the_option_index() -> None:
    question = SelectQuestion("which one?", ("[/]first", "second"))
    app = ScreenHost(SelectScreen(question))
    async with app.run_test(size=SIZE) as pilot:
        options = app.screen.query_one(OptionList)
        assert "[/]first" in str(options.get_option_at_index(0).prompt)
        await pilot.press("down", "enter")
    assert app.answer == 1


async def test_escape_answers_a_select_with_none() -> None:
    app = ScreenHost(SelectScreen(SelectQuestion("which?", ("a", "b"))))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
    assert app.answer is None


async def test_an_input_answers_with_the_text_typed() -> None:
    app = ScreenHost(InputScreen(InputQuestion("name?", default="anon")))
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one(Input).value = "ORDERS [0]"
        await pilot.press("enter")
    assert app.answer == "ORDERS [0]"


async def test_an_empty_input_answers_with_the_default() -> None:
    app = ScreenHost(InputScreen(InputQuestion("name?", default="anon")))
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one(Input).value = ""
        await pilot.press("enter")
    assert app.answer == "anon"
