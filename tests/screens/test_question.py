from __future__ import annotations

import asyncio

from textual import events
from textual.app import App
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static

from fisk_ai.screens.approval import ApprovalScreen
from fisk_ai.screens.question import ConfirmScreen, InputScreen, QuestionModal, SelectScreen
from fisk_ai.tools.questions import (
    ApprovalAnswer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    InputQuestion,
    SelectQuestion,
)
from tests.screens.answerable import until_answerable
from tests.screens.screen_host import SIZE, UNANSWERED, ScreenHost

NEVER = 3600.0
"""A guard no test outlasts, for checking what the guard holds back."""


def approval() -> ApprovalQuestion:
    return ApprovalQuestion(
        "t1", "stream_rm", "stream rm", "stream rm -- ORDERS", "ai:confirm", ("stream", "rm")
    )


def shown(app: App[None], selector: str) -> str:
    return str(app.screen.query_one(selector).render())


def keys_line(app: App[None]) -> str:
    return str(app.screen.query_one(".question-keys", Static).render())


class Beneath(Screen[None]):
    """The screen a question opens over, keeping what the question held back."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[tuple[str, str]] = []

    def on_question_modal_held_back(self, message: QuestionModal.HeldBack) -> None:
        self.held.append((message.key, message.text))


class HostOverBeneath(ScreenHost[ApprovalAnswer]):
    def __init__(self, screen: Screen[ApprovalAnswer]) -> None:
        super().__init__(screen)
        self.beneath = Beneath()

    def on_mount(self) -> None:
        # Textual calls ScreenHost's on_mount after this one, which pushes the question.
        self.push_screen(self.beneath)


class EnterFirstHost(ScreenHost[ApprovalAnswer]):
    """Enter arrives just as the question goes up, as from an operator typing in the chat bar."""

    def on_mount(self) -> None:
        # Textual calls ScreenHost's on_mount after this one, which pushes the question.
        self.post_message(events.Key("enter", None))


async def test_keys_typed_while_the_guard_runs_are_not_an_answer() -> None:
    app = ScreenHost(ApprovalScreen(approval(), key_guard_seconds=NEVER))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "y", "2", "escape")
        await pilot.pause()
        assert app.answer is UNANSWERED
        assert "keys:" not in keys_line(app)


async def test_a_click_while_the_guard_runs_is_not_an_answer() -> None:
    app = ScreenHost(ApprovalScreen(approval(), key_guard_seconds=NEVER))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#approval-once")
        await pilot.pause()
        assert app.answer is UNANSWERED


async def test_the_keys_line_appears_once_the_question_takes_keys() -> None:
    app = ScreenHost(ConfirmScreen(ConfirmQuestion("sure?")))
    async with app.run_test(size=SIZE):
        await until_answerable(app)
        assert keys_line(app).startswith("keys: y Yes")


async def test_keys_held_back_go_to_the_screen_beneath() -> None:
    app = HostOverBeneath(ApprovalScreen(approval(), key_guard_seconds=NEVER))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h", "i", "enter")
        app.post_message(events.Paste("more text"))
        await pilot.pause()
        assert app.beneath.held == [("h", "h"), ("i", "i"), ("enter", ""), ("paste", "more text")]


async def test_enter_pressed_as_the_question_opens_does_not_decline() -> None:
    app = EnterFirstHost(ApprovalScreen(approval()))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.pause()
        assert app.answer is UNANSWERED
        await pilot.press("y")
    assert app.answer is ApprovalChoice.ONCE


async def test_a_key_made_before_the_question_was_up_never_answers() -> None:
    typed_earlier = events.Key("enter", None)
    app = ScreenHost(ApprovalScreen(approval()))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        app.post_message(typed_earlier)
        await pilot.pause()
        assert app.answer is UNANSWERED
        await pilot.press("enter")
    assert app.answer is ApprovalChoice.NO


class CountedEvent(asyncio.Event):
    """An event that counts how often it was cleared: a guard restarted is seen however soon it
    runs out again, which on a busy machine can be before the test looks."""

    def __init__(self) -> None:
        super().__init__()
        self.clears = 0

    def clear(self) -> None:
        self.clears += 1
        super().clear()


async def test_a_key_the_question_does_not_take_goes_beneath_and_restarts_the_guard() -> None:
    modal = ApprovalScreen(approval())
    modal.answerable = CountedEvent()
    app = HostOverBeneath(modal)
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press("h")
        assert modal.answerable.clears == 1
        assert app.beneath.held == [("h", "h")]
        await until_answerable(app)
        await pilot.press("y")
    assert app.answer is ApprovalChoice.ONCE


async def test_a_key_reaching_a_question_already_answered_goes_beneath() -> None:
    modal = ApprovalScreen(approval())
    app = HostOverBeneath(modal)
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        modal.dismiss(ApprovalChoice.ONCE)
        assert modal.holds_back(events.Key("x", "x"))
        await pilot.pause()
        assert app.beneath.held == [("x", "x")]


async def test_text_typed_into_an_input_question_while_the_guard_runs_is_not_kept() -> None:
    app = ScreenHost(InputScreen(InputQuestion("name?", default="anon"), key_guard_seconds=NEVER))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x", "y")
        app.post_message(events.Paste("pasted"))
        await pilot.pause()
        assert app.screen.query_one(Input).value == "anon"


async def test_a_confirm_defaults_to_no_and_yes_is_to_its_right() -> None:
    app = ScreenHost(ConfirmScreen(ConfirmQuestion("delete [0] things?")))
    async with app.run_test(size=SIZE) as pilot:
        assert "delete [0] things?" in shown(app, "#question-text")
        await until_answerable(app)
        await pilot.press("right", "enter")
    assert app.answer is True


async def test_escape_answers_a_confirm_with_no() -> None:
    app = ScreenHost(ConfirmScreen(ConfirmQuestion("sure?")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press("escape")
    assert app.answer is False


async def test_y_answers_a_confirm_with_yes() -> None:
    app = ScreenHost(ConfirmScreen(ConfirmQuestion("sure?")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press("y")
    assert app.answer is True


async def test_n_answers_a_confirm_with_no() -> None:
    app = ScreenHost(ConfirmScreen(ConfirmQuestion("sure?")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press("n")
    assert app.answer is False


async def test_a_select_answers_with_the_option_index() -> None:
    question = SelectQuestion("which one?", ("[/]first", "second"))
    app = ScreenHost(SelectScreen(question))
    async with app.run_test(size=SIZE) as pilot:
        options = app.screen.query_one(OptionList)
        assert "[/]first" in str(options.get_option_at_index(0).prompt)
        await until_answerable(app)
        await pilot.press("down", "enter")
    assert app.answer == 1


async def test_escape_answers_a_select_with_none() -> None:
    app = ScreenHost(SelectScreen(SelectQuestion("which?", ("a", "b"))))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        await pilot.press("escape")
    assert app.answer is None


async def test_an_input_answers_with_the_text_typed() -> None:
    app = ScreenHost(InputScreen(InputQuestion("name?", default="anon")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        app.screen.query_one(Input).value = "ORDERS [0]"
        await pilot.press("enter")
    assert app.answer == "ORDERS [0]"


async def test_an_empty_input_answers_with_the_default() -> None:
    app = ScreenHost(InputScreen(InputQuestion("name?", default="anon")))
    async with app.run_test(size=SIZE) as pilot:
        await until_answerable(app)
        app.screen.query_one(Input).value = ""
        await pilot.press("enter")
    assert app.answer == "anon"
