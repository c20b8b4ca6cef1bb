"""End of input at a question is told apart from an interrupt: the line surface stops the run
on it, as the first Ctrl-C does, before the question is given up."""

from __future__ import annotations

import asyncio
import io
import os
import pty
from collections.abc import Iterator

import pytest

from fisk_ai.lineui.prompter import InputClosed, TerminalPrompter
from fisk_ai.tools.questions import ApprovalQuestion, ConfirmQuestion, QuestionInterrupted

APPROVAL = ApprovalQuestion("tu_1", "stream_rm", "stream rm", "stream rm -- ORDERS", "ai:confirm")
END_OF_INPUT = b"\x04"


@pytest.fixture
def terminal() -> Iterator[tuple[int, io.TextIOWrapper]]:
    controller, device = pty.openpty()
    reader = os.fdopen(device, "r")
    yield controller, reader
    reader.close()
    os.close(controller)


@pytest.mark.parametrize("question", [APPROVAL, ConfirmQuestion("remove ORDERS?")])
async def test_ctrl_d_at_a_question_closes_its_input(
    terminal: tuple[int, io.TextIOWrapper], question: ApprovalQuestion | ConfirmQuestion
) -> None:
    controller, reader = terminal
    prompter = TerminalPrompter(reader, io.StringIO())
    os.write(controller, END_OF_INPUT)
    with pytest.raises(InputClosed):
        await prompter.ask(question)


class InterruptingScreen(io.StringIO):
    """A screen that presses Ctrl-C as soon as the prompt asks for a choice."""

    prompter: TerminalPrompter

    def write(self, text: str) -> int:
        if "Choice" in text:
            asyncio.get_running_loop().call_soon(self.prompter.interrupt)
        return super().write(text)


async def test_an_interrupt_is_not_a_closed_input(terminal: tuple[int, io.TextIOWrapper]) -> None:
    _, reader = terminal
    screen = InterruptingScreen()
    prompter = TerminalPrompter(reader, screen)
    screen.prompter = prompter
    with pytest.raises(QuestionInterrupted) as interrupted:
        await prompter.ask(APPROVAL)
    assert not isinstance(interrupted.value, InputClosed)
