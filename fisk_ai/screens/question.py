"""The question modals of the ask_human tools: confirm, select and input, and the base every
question modal derives from. Only one is up at a time; the text comes from the model and is
shown as typed, never parsed as markup."""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from fisk_ai.tools.builtin.hitl import QUESTION_LIMIT
from fisk_ai.tools.questions import (
    Answer,
    ConfirmQuestion,
    InputQuestion,
    Question,
    SelectQuestion,
)
from fisk_ai.util.sanitize import single_line

QuestionT = TypeVar("QuestionT", bound=Question)
AnswerT = TypeVar("AnswerT", bound=Answer)


class QuestionModal(ModalScreen[AnswerT], Generic[QuestionT, AnswerT]):
    """A modal that puts ``question`` to the operator and is dismissed with the answer, so
    whoever pushed it is called back with an ``AnswerT | None``, which is already an
    ``Answer``."""

    def __init__(self, question: QuestionT) -> None:
        super().__init__()
        self.question = question


QUESTION_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 80%; max-width: 100; height: auto;
    border: thick $accent; background: $surface; padding: 1 2;
}}
{name} Horizontal {{ height: auto; margin-top: 1; }}
{name} Button {{ margin-right: 2; }}
{name} OptionList {{ height: auto; max-height: 12; margin-top: 1; }}
{name} Input {{ margin-top: 1; }}
"""


def question_text(question: str) -> Static:
    """The model's question, one line, capped, shown as typed."""
    return Static(single_line(question, QUESTION_LIMIT), markup=False, id="question-text")


class ConfirmScreen(QuestionModal[ConfirmQuestion, bool]):
    DEFAULT_CSS = QUESTION_CSS.format(name="ConfirmScreen")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "app.focus_previous", "Previous", show=False),
        Binding("right", "app.focus_next", "Next", show=False),
        Binding("escape", "answer(False)", "No", show=False),
    ]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield question_text(self.question.question)
            with Horizontal():
                yield Button("No", id="confirm-no")
                yield Button("Yes", id="confirm-yes")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer(event.button.id == "confirm-yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class SelectScreen(QuestionModal[SelectQuestion, int]):
    DEFAULT_CSS = QUESTION_CSS.format(name="SelectScreen")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "none", "None", show=False),
    ]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield question_text(self.question.question)
            yield OptionList(
                *(
                    Option(Content(single_line(option, QUESTION_LIMIT)))
                    for option in self.question.options
                ),
                id="select-options",
            )
            yield Static("Enter chooses; Esc answers none", markup=False)

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_index)

    def action_none(self) -> None:
        self.dismiss(None)


class InputScreen(QuestionModal[InputQuestion, str]):
    DEFAULT_CSS = QUESTION_CSS.format(name="InputScreen")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield question_text(self.question.question)
            yield Input(value=single_line(self.question.default, QUESTION_LIMIT), id="answer")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value if event.value else self.question.default)
