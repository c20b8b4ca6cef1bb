"""The terminal prompter against a real pseudo-terminal."""

from __future__ import annotations

import asyncio
import io
import os
import pty
from collections.abc import Iterator

import pytest

from fisk_ai.lineui.prompter import TerminalPrompter
from fisk_ai.multiplex import PaneReport, Reporter
from fisk_ai.tools.questions import (
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    DeclineWithReason,
    InputQuestion,
    QuestionInterrupted,
    SelectQuestion,
)

APPROVAL = ApprovalQuestion("tu_1", "stream_rm", "stream rm", "stream rm -- ORDERS", "ai:confirm")


@pytest.fixture
def terminal() -> Iterator[tuple[int, io.TextIOWrapper]]:
    controller, device = pty.openpty()
    reader = os.fdopen(device, "r")
    yield controller, reader
    reader.close()
    os.close(controller)


def prompter_on(reader: io.TextIOWrapper) -> tuple[TerminalPrompter, io.StringIO]:
    screen = io.StringIO()
    return TerminalPrompter(reader, screen), screen


@pytest.mark.parametrize(
    ("typed", "choice"),
    [
        (b"\n", ApprovalChoice.NO),
        (b"1\n", ApprovalChoice.NO),
        (b"2\n", ApprovalChoice.ONCE),
        (b"3\n", ApprovalChoice.ALWAYS),
    ],
)
async def test_approval_choices_with_no_first(
    terminal: tuple[int, io.TextIOWrapper], typed: bytes, choice: ApprovalChoice
) -> None:
    controller, reader = terminal
    prompter, screen = prompter_on(reader)
    os.write(controller, typed)
    assert await prompter.ask(APPROVAL) is choice
    shown = screen.getvalue()
    assert 'confirmation required: "stream rm" carries tag "ai:confirm"' in shown
    assert shown.index("No, do not run it") < shown.index("Yes, run it once")


async def test_four_declines_with_the_sentence_typed_next(
    terminal: tuple[int, io.TextIOWrapper],
) -> None:
    controller, reader = terminal
    prompter, screen = prompter_on(reader)
    os.write(controller, b"4\nuse the staging cluster\n")
    assert await prompter.ask(APPROVAL) == DeclineWithReason("use the staging cluster")
    assert "  4) No, and tell the agent why" in screen.getvalue()


async def test_four_with_no_sentence_is_a_plain_no(terminal: tuple[int, io.TextIOWrapper]) -> None:
    controller, reader = terminal
    prompter, _ = prompter_on(reader)
    os.write(controller, b"4\n\n")
    assert await prompter.ask(APPROVAL) is ApprovalChoice.NO


async def test_an_approval_shows_each_argument_quoted_and_what_always_covers(
    terminal: tuple[int, io.TextIOWrapper],
) -> None:
    controller, reader = terminal
    prompter, screen = prompter_on(reader)
    argv = ("stream", "rm", "--", "prod; rm -rf / $(whoami)")
    hostile = ApprovalQuestion("tu_1", "stream_rm", "stream rm", " ".join(argv), "ai:confirm", argv)
    os.write(controller, b"1\n")
    await prompter.ask(hostile)
    shown = screen.getvalue()
    assert "-> stream rm -- 'prod; rm -rf / $(whoami)'\n" in shown
    assert (
        '  3) Always: run "stream rm" with any arguments, without asking, '
        "for the rest of this conversation\n"
    ) in shown


async def test_model_text_is_sanitised_before_it_is_shown(
    terminal: tuple[int, io.TextIOWrapper],
) -> None:
    controller, reader = terminal
    prompter, screen = prompter_on(reader)
    os.write(controller, b"y\n")
    assert await prompter.ask(ConfirmQuestion("really\x1b[2J delete?\x07")) is True
    assert "\x1b" not in screen.getvalue() and "\x07" not in screen.getvalue()


async def test_select_returns_the_index_or_none(terminal: tuple[int, io.TextIOWrapper]) -> None:
    controller, reader = terminal
    prompter, _ = prompter_on(reader)
    os.write(controller, b"2\n")
    assert await prompter.ask(SelectQuestion("which?", ("a", "b"))) == 1
    os.write(controller, b"\n")
    assert await prompter.ask(SelectQuestion("which?", ("a", "b"))) is None


async def test_input_falls_back_to_the_default(terminal: tuple[int, io.TextIOWrapper]) -> None:
    controller, reader = terminal
    prompter, _ = prompter_on(reader)
    os.write(controller, b"\n")
    assert await prompter.ask(InputQuestion("name?", "ORDERS")) == "ORDERS"
    os.write(controller, b"PAYMENTS\n")
    assert await prompter.ask(InputQuestion("name?", "ORDERS")) == "PAYMENTS"


async def test_closed_input_is_not_an_answer(tmp_path: object) -> None:
    read_end, write_end = os.pipe()
    os.close(write_end)
    with os.fdopen(read_end, "r") as reader:
        prompter = TerminalPrompter(reader, io.StringIO())
        with pytest.raises(QuestionInterrupted):
            await prompter.ask(APPROVAL)


class InterruptingScreen(io.StringIO):
    """A screen that presses Ctrl-C as soon as the prompt asks for a choice."""

    prompter: TerminalPrompter

    def write(self, text: str) -> int:
        if "Choice" in text:
            asyncio.get_running_loop().call_soon(self.prompter.interrupt)
        return super().write(text)


async def test_an_interrupt_gives_the_question_up(terminal: tuple[int, io.TextIOWrapper]) -> None:
    _, reader = terminal
    screen = InterruptingScreen()
    prompter = TerminalPrompter(reader, screen)
    screen.prompter = prompter
    with pytest.raises(QuestionInterrupted):
        await prompter.ask(APPROVAL)


def test_a_pipe_is_not_a_terminal() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "r") as reader, os.fdopen(write_end, "w") as writer:
        assert TerminalPrompter(reader, writer).can_prompt() is False


class RecordingPane:
    """A multiplexer that keeps every report it is handed."""

    name = "recording"

    def __init__(self) -> None:
        self.reports: list[tuple[str, str]] = []

    async def deliver(self, report: PaneReport) -> None:
        self.reports.append((report.state.value, report.reason))

    async def restore(self) -> None:
        """Giving the pane back is no report."""


async def test_a_question_marks_the_pane_blocked_then_working(
    terminal: tuple[int, io.TextIOWrapper],
) -> None:
    controller, reader = terminal
    pane = RecordingPane()
    reporter = Reporter("ops", pane)
    prompter = TerminalPrompter(reader, io.StringIO(), reporter=reporter)
    blocked_seen: list[tuple[str, str]] = []

    async def answer_once_blocked() -> None:
        await reporter.flush()
        blocked_seen.extend(pane.reports)
        os.write(controller, b"2\n")

    answering = asyncio.ensure_future(answer_once_blocked())
    assert await prompter.ask(APPROVAL) is ApprovalChoice.ONCE
    await answering
    await reporter.aclose()
    assert blocked_seen == [("blocked", "approve stream rm -- ORDERS (ai:confirm)")]
    assert pane.reports[-1] == ("working", "")
