"""The approval modal: may this gated call run? No comes first and has the focus, so a
reflexive Enter declines.

The command is shown as shell words, each argument quoted as a shell would need it, so an
argument holding ``;`` or ``$(...)`` reads as one argument and never as a command line of its
own. A line too long for the modal shows one argument a line. What Always allows is said in a
sentence, and "No, tell why" sends the operator's sentence to the model with the decline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Input, Static

from fisk_ai.presentation import CALL_PREFIX
from fisk_ai.screens.question import GuardedInput, QuestionModal, key_label
from fisk_ai.tools.questions import (
    DECLINE_REASON_LIMIT,
    ApprovalAnswer,
    ApprovalChoice,
    ApprovalQuestion,
    DeclineWithReason,
)
from fisk_ai.util.sanitize import single_line

TELL_WHY = "tell"
"""The id suffix of the button that opens the reason field; it is not an answer by itself."""

APPROVAL_BUTTONS = (
    (ApprovalChoice.NO.value, "No", "1/n"),
    (ApprovalChoice.ONCE.value, "Once", "2/y"),
    (ApprovalChoice.ALWAYS.value, "Always", "3/a"),
    (TELL_WHY, "No, tell why", "4/t"),
)

CONTINUATION_INDENT = " " * (len(CALL_PREFIX) + 2)
COMMAND_BOX_LINES = 5
"""A long command scrolls in a box this many lines high, or a fifth of the screen's height when
that is more: the whole modal still fits a 24-line terminal with the reason field open."""


def approval_body(question: ApprovalQuestion) -> tuple[str, str, str]:
    """The heading, the sentence naming the gating tag and the one saying what Always allows."""
    command = single_line(question.command)
    return (
        "Run this command?",
        f'"{command}" carries tag "{single_line(question.trigger)}"',
        f"Always: {question.always_covers()}.",
    )


def command_text(words: Sequence[str], lead: int, width: int) -> str:
    """The command line after the call prefix: on one line when it fits ``width`` cells, else
    its first ``lead`` words (the command path) on the first line and one argument a line."""
    line = CALL_PREFIX + " ".join(words)
    if Content(line).cell_length <= width or len(words) <= lead:
        return line
    first = CALL_PREFIX + " ".join(words[:lead])
    return "\n".join([first, *(CONTINUATION_INDENT + word for word in words[lead:])])


def command_path_length(question: ApprovalQuestion, words: Sequence[str]) -> int:
    """How many leading words are the command path (``stream rm``), at least one."""
    path = question.command.split()
    return len(path) if tuple(words[: len(path)]) == tuple(path) else 1


class CommandLine(Static):
    """The command as shell words, laid out for the width it is given."""

    def __init__(self, question: ApprovalQuestion, *, id: str) -> None:
        self.words = question.shell_words()
        self.lead = command_path_length(question, self.words)
        super().__init__(id=id)

    def on_resize(self, event: events.Resize) -> None:
        self.update(Content(command_text(self.words, self.lead, event.size.width)))


class ApprovalScreen(QuestionModal[ApprovalQuestion, ApprovalAnswer]):
    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > Vertical {
        width: 90%; max-width: 100; height: auto;
        border: thick $warning; background: $surface; padding: 0 2;
    }
    ApprovalScreen #approval-command-box {
        height: auto; margin: 1 0; scrollbar-size-vertical: 1;
    }
    ApprovalScreen #approval-command { color: $text-primary; }
    ApprovalScreen #approval-tag, ApprovalScreen #approval-scope { color: $text-muted; }
    ApprovalScreen Horizontal { height: auto; margin-top: 1; }
    ApprovalScreen Button { margin-right: 1; min-width: 0; width: auto; }
    ApprovalScreen #approval-reason { display: none; margin-top: 1; }
    ApprovalScreen #approval-reason.-open { display: block; }
    """

    KEYS = "keys: the number or letter on a button  Esc No  Left/Right move"
    REASON_KEYS = "keys: Enter declines with this sentence  Esc back to the buttons"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "app.focus_previous", "Previous", show=False),
        Binding("right", "app.focus_next", "Next", show=False),
        Binding("escape", "escape", "No", show=False),
        Binding("1,n", "choose('no')", "No", show=False),
        Binding("2,y", "choose('once')", "Once", show=False),
        Binding("3,a", "choose('always')", "Always", show=False),
        Binding("4,t", "tell_why", "No, tell why", show=False),
    ]

    def compose(self) -> ComposeResult:
        heading, tag, always = approval_body(self.question)
        with Vertical():
            yield Static(heading, markup=False, id="approval-heading")
            with VerticalScroll(id="approval-command-box"):
                yield CommandLine(self.question, id="approval-command")
            yield Static(tag, markup=False, id="approval-tag")
            yield Static(always, markup=False, id="approval-scope")
            with Horizontal():
                for value, label, keys in APPROVAL_BUTTONS:
                    yield Button(key_label(label, keys), id=f"approval-{value}")
            yield GuardedInput(
                self.takes,
                placeholder="why not, in a sentence the agent will read",
                max_length=DECLINE_REASON_LIMIT,
                id="approval-reason",
            )
            yield self.keys_line()

    def on_mount(self) -> None:
        self.query_one("#approval-reason", Input).border_title = "the agent reads this"
        self.query_one("#approval-no", Button).focus()

    def on_resize(self, event: events.Resize) -> None:
        # Set here rather than in vh, which a relayout resolved against more than the screen.
        box = self.query_one("#approval-command-box", VerticalScroll)
        box.styles.max_height = max(COMMAND_BOX_LINES, event.size.height // 5)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if not self.answerable.is_set():
            return
        value = (event.button.id or "").removeprefix("approval-")
        if value == TELL_WHY:
            self.action_tell_why()
        else:
            self.action_choose(value)

    def action_choose(self, value: str) -> None:
        self.dismiss(ApprovalChoice(value))

    def action_tell_why(self) -> None:
        reason = self.query_one("#approval-reason", Input)
        reason.add_class("-open")
        reason.focus()
        self.show_keys(self.REASON_KEYS)

    def action_escape(self) -> None:
        reason = self.query_one("#approval-reason", Input)
        if not reason.has_class("-open"):
            self.dismiss(ApprovalChoice.NO)
            return
        # Back to the buttons, the sentence kept should the operator open the field again.
        reason.remove_class("-open")
        self.query_one("#approval-no", Button).focus()
        self.show_keys(self.KEYS)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        said = event.value.strip()
        self.dismiss(DeclineWithReason(said) if said else ApprovalChoice.NO)
