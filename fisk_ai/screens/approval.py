"""The approval modal: may this gated call run? No comes first and has the focus, so a
reflexive Enter declines."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from fisk_ai.screens.question import QuestionModal
from fisk_ai.tools.questions import ApprovalChoice, ApprovalQuestion
from fisk_ai.util.sanitize import single_line

APPROVAL_BUTTONS = (
    (ApprovalChoice.NO, "No"),
    (ApprovalChoice.ONCE, "Once"),
    (ApprovalChoice.ALWAYS, "Always"),
)


def approval_body(question: ApprovalQuestion) -> tuple[str, str, str]:
    """The heading, the sanitised command line and the sentence naming the gating tag."""
    command = single_line(question.command)
    return (
        "Run this command?",
        single_line(question.display, 2000),
        f'"{command}" carries tag "{single_line(question.trigger)}"',
    )


class ApprovalScreen(QuestionModal[ApprovalQuestion, ApprovalChoice]):
    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > Vertical {
        width: 80%; max-width: 100; height: auto;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    ApprovalScreen #approval-command { color: $text-primary; margin: 1 0; }
    ApprovalScreen #approval-tag { color: $text-muted; }
    ApprovalScreen Horizontal { height: auto; margin-top: 1; }
    ApprovalScreen Button { margin-right: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "app.focus_previous", "Previous", show=False),
        Binding("right", "app.focus_next", "Next", show=False),
        Binding("escape", "choose('no')", "No", show=False),
    ]

    def compose(self) -> ComposeResult:
        heading, command, tag = approval_body(self.question)
        with Vertical():
            yield Static(heading, markup=False, id="approval-heading")
            yield Static("-> " + command, markup=False, id="approval-command")
            yield Static(tag, markup=False, id="approval-tag")
            with Horizontal():
                for choice, label in APPROVAL_BUTTONS:
                    yield Button(label, id=f"approval-{choice.value}")

    def on_mount(self) -> None:
        self.query_one("#approval-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_choose((event.button.id or "").removeprefix("approval-"))

    def action_choose(self, value: str) -> None:
        self.dismiss(ApprovalChoice(value))
