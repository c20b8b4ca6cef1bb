from __future__ import annotations

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
from tests.screens.modal_host import SIZE, ModalHost


def approval(display: str = "stream rm -- ORDERS") -> ApprovalQuestion:
    return ApprovalQuestion("t1", "stream_rm", "stream rm", display, "ai:confirm")


def shown(app: ModalHost, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def test_enter_on_an_approval_declines() -> None:
    app = ModalHost(ApprovalScreen(approval()))  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        focused = app.focused
        assert isinstance(focused, Button) and str(focused.label) == "No"
        await pilot.press("enter")
    assert app.answer is ApprovalChoice.NO


async def test_always_is_two_to_the_right_of_no() -> None:
    app = ModalHost(ApprovalScreen(approval()))  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right", "right", "enter")
    assert app.answer is ApprovalChoice.ALWAYS


async def test_an_approval_shows_control_characters_stripped_and_markup_as_typed() -> None:
    app = ModalHost(ApprovalScreen(approval("stream rm -- [bold]x\x1b[2J[/]")))  # type: ignore[arg-type]
    async with app.run_test(size=SIZE):
        text = shown(app, "#approval-command")
        assert "[bold]x" in text and "[/]" in text
        assert "\x1b" not in text
        assert '"stream rm" carries tag "ai:confirm"' in shown(app, "#approval-tag")


async def test_a_confirm_defaults_to_no_and_yes_is_to_its_right() -> None:
    app = ModalHost(ConfirmScreen(ConfirmQuestion("delete [0] things?")))  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        assert "delete [0] things?" in shown(app, "#question-text")
        await pilot.press("right", "enter")
    assert app.answer is True


async def test_escape_answers_a_confirm_with_no() -> None:
    app = ModalHost(ConfirmScreen(ConfirmQuestion("sure?")))  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
    assert app.answer is False


async def test_a_select_answers_with_the_option_index() -> None:
    question = SelectQuestion("which one?", ("[/]first", "second"))
    app = ModalHost(SelectScreen(question))  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        options = app.screen.query_one(OptionList)
        assert "[/]first" in str(options.get_option_at_index(0).prompt)
        await pilot.press("down", "enter")
    assert app.answer == 1


async def test_escape_answers_a_select_with_none() -> None:
    app = ModalHost(SelectScreen(SelectQuestion("which?", ("a", "b"))))  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
    assert app.answer is None


async def test_an_input_answers_with_the_text_typed() -> None:
    app = ModalHost(InputScreen(InputQuestion("name?", default="anon")))  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one(Input).value = "ORDERS [0]"
        await pilot.press("enter")
    assert app.answer == "ORDERS [0]"


async def test_an_empty_input_answers_with_the_default() -> None:
    app = ModalHost(InputScreen(InputQuestion("name?", default="anon")))  # type: ignore[arg-type]
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one(Input).value = ""
        await pilot.press("enter")
    assert app.answer == "anon"
