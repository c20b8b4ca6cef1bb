"""The question modals of the ask_human tools: confirm, select and input, and the base every
question modal derives from. Only one is up at a time; the text comes from the model and is
shown as typed, never parsed as markup.

A question can open while the operator is typing into the chat bar. Keys that reach it before
it was on screen, or within a short guard after it was drawn, are not an answer: they are held
back and handed to the screen beneath, for which they were typed. Each key held back restarts
the guard, so a burst of typing never ends in an answer; the keys line appears once the
question takes keys. Later, a printable key the question has no use for shows the operator is
typing something else: it goes beneath too and starts the guard again. Keys arriving as the
question goes away go beneath.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ClassVar, Generic, TypeVar

from textual import events
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.timer import Timer
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

KEY_GUARD_SECONDS = 0.4
"""How long a question ignores keys after it is first drawn, and after each key it ignored:
long enough for a person to see it and stop typing, short enough not to be waited for."""

KeyOrPaste = events.Key | events.Paste


class QuestionModal(ModalScreen[AnswerT], Generic[QuestionT, AnswerT]):
    """A modal that puts ``question`` to the operator and is dismissed with the answer, so
    whoever pushed it is called back with an ``AnswerT | None``, which is already an
    ``Answer``. ``answerable`` is set once it takes keys; ``KEYS`` is the line then shown."""

    DEFAULT_CSS = """
    QuestionModal .question-keys { color: $text-muted; margin-top: 1; }
    """
    KEYS: ClassVar[str] = ""

    class HeldBack(Message):
        """A key or a paste that reached a question before it took keys, sent to the screen
        the question opened over. ``key`` is the key's name (``a``, ``enter``, ``ctrl+u``) or
        ``paste``; ``text`` is what it would have typed, empty for a key that types nothing."""

        def __init__(self, key: str, text: str) -> None:
            super().__init__()
            self.key = key
            self.text = text

    def __init__(self, question: QuestionT, *, key_guard_seconds: float = KEY_GUARD_SECONDS):
        super().__init__()
        self.question = question
        self.answerable = asyncio.Event()
        self._key_guard_seconds = key_guard_seconds
        self._current_since: float | None = None
        self._guard: Timer | None = None
        self.hand_back: Callable[[str, str], None] | None = None
        """Where a key held back goes (its name and what it types), called at once so that it
        lands before any key typed after the question closes; None posts it as ``HeldBack`` to
        the screen beneath."""
        self._answered = False

    def dismiss(self, result: AnswerT | None = None) -> AwaitComplete:
        # Keys still arriving while the question goes away are the screen beneath's.
        self._answered = True
        return super().dismiss(result)

    def keys_line(self) -> Static:
        """The keys this question takes, shown once it takes them."""
        return Static("", markup=False, classes="question-keys")

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        if self._current_since is not None:
            return
        # A key made before this event was typed before the question was up, whenever it is
        # handled; the guard itself runs from the first frame that shows the question.
        self._current_since = event.time
        self.call_after_refresh(self._start_guard)

    def _start_guard(self) -> None:
        if self._guard is not None:
            self._guard.stop()
        self._guard = self.set_timer(self._key_guard_seconds, self._take_keys)

    def _take_keys(self) -> None:
        self._guard = None
        self.show_keys(self.KEYS)
        self.answerable.set()

    def show_keys(self, keys: str) -> None:
        """Say on the keys line which keys the question takes now."""
        for line in self.query(".question-keys").results(Static):
            line.update(Content(keys))

    def holds_back(self, event: KeyOrPaste) -> bool:
        """Whether ``event`` must not act on the question, which is then handed beneath: it
        was typed before the question was up, while the guard runs (which it restarts), after
        the question was answered, or it is typing the question has no use for (which starts
        the guard again: the operator is typing something else)."""
        if not self._answered:
            early = self._current_since is None or event.time < self._current_since
            if not early and self.answerable.is_set():
                if not self._stray(event):
                    return False
                self.answerable.clear()
                self.show_keys("")
                self._start_guard()
            elif self._guard is not None:
                self._start_guard()
        if isinstance(event, events.Paste):
            key, text = "paste", event.text
        else:
            key, text = event.key, (event.character if event.is_printable else None) or ""
        if self.hand_back is not None:
            self.hand_back(key, text)
        else:
            # Looked up when a key comes, since one can come before the question is shown.
            stack = self.app.screen_stack
            below = stack.index(self) - 1 if self in stack else len(stack) - 1
            if below >= 0 and stack[below] is not self:
                stack[below].post_message(self.HeldBack(key, text))
        return True

    def _stray(self, event: KeyOrPaste) -> bool:
        """Text for somewhere else: printable keys or a paste that no key of the question and
        no text field of it takes."""
        if isinstance(self.focused, Input):
            return False
        if isinstance(event, events.Paste):
            return True
        return event.is_printable and event.key not in self.active_bindings

    def takes(self, event: KeyOrPaste) -> bool:
        """Let ``event`` act unless it is held back; a held-back event goes no further."""
        if self.holds_back(event):
            event.stop()
            event.prevent_default()
            return False
        return True

    def on_key(self, event: events.Key) -> None:
        self.takes(event)

    def on_paste(self, event: events.Paste) -> None:
        self.takes(event)


class GuardedInput(Input):
    """An input that lets its question's guard decide first, since it takes printable keys and
    pastes before they could reach the screen."""

    def __init__(
        self,
        guard: Callable[[KeyOrPaste], bool],
        value: str = "",
        *,
        placeholder: str = "",
        max_length: int = 0,
        id: str | None = None,
    ) -> None:
        super().__init__(value, placeholder=placeholder, max_length=max_length, id=id)
        self._guard = guard

    def on_key(self, event: events.Key) -> None:
        self._guard(event)

    def on_paste(self, event: events.Paste) -> None:
        self._guard(event)


def key_label(label: str, keys: str) -> Content:
    """A button's label with the keys that press it: ``No 1/n``."""
    return Content(f"{label} {keys}")


QUESTION_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 80%; max-width: 100; height: auto;
    border: thick $accent; background: $surface; padding: 1 2;
}}
{name} Horizontal {{ height: auto; margin-top: 1; }}
{name} Button {{ margin-right: 1; min-width: 0; width: auto; }}
{name} OptionList {{ height: auto; max-height: 12; margin-top: 1; }}
{name} Input {{ margin-top: 1; }}
"""


def question_text(question: str) -> Static:
    """The model's question, one line, capped, shown as typed."""
    return Static(single_line(question, QUESTION_LIMIT), markup=False, id="question-text")


class ConfirmScreen(QuestionModal[ConfirmQuestion, bool]):
    DEFAULT_CSS = QUESTION_CSS.format(name="ConfirmScreen")
    KEYS = "keys: y Yes  n or Esc No  Left/Right move"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "app.focus_previous", "Previous", show=False),
        Binding("right", "app.focus_next", "Next", show=False),
        Binding("escape,n", "answer(False)", "No", show=False),
        Binding("y", "answer(True)", "Yes", show=False),
    ]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield question_text(self.question.question)
            with Horizontal():
                yield Button(key_label("No", "n"), id="confirm-no")
                yield Button(key_label("Yes", "y"), id="confirm-yes")
            yield self.keys_line()

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if self.answerable.is_set():
            self.action_answer(event.button.id == "confirm-yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class SelectScreen(QuestionModal[SelectQuestion, int]):
    DEFAULT_CSS = QUESTION_CSS.format(name="SelectScreen")
    KEYS = "keys: Up/Down move  Enter choose  Esc none"
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
            yield self.keys_line()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.answerable.is_set():
            self.dismiss(event.option_index)

    def action_none(self) -> None:
        self.dismiss(None)


class InputScreen(QuestionModal[InputQuestion, str]):
    DEFAULT_CSS = QUESTION_CSS.format(name="InputScreen")
    KEYS = "keys: Enter answer (empty answers the default)"

    def compose(self) -> ComposeResult:
        with Vertical():
            yield question_text(self.question.question)
            yield GuardedInput(
                self.takes, single_line(self.question.default, QUESTION_LIMIT), id="answer"
            )
            yield self.keys_line()

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value if event.value else self.question.default)
