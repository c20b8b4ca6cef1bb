"""Questions at the terminal: rendered on stderr, answered on stdin, No first.

The approval list puts No first so a reflexive Enter declines. Model-supplied text is stripped of
control sequences before it is shown, so an argument cannot spoof what the operator reads.
Interrupting a question, or closing its input, is not an answer: it raises QuestionInterrupted
(InputClosed for the closed input, which the line surface takes as a stop of the run).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TextIO

from fisk_ai.multiplex import PaneState, Reporter
from fisk_ai.presentation import CALL_PREFIX, blocked_reason
from fisk_ai.tools.questions import (
    Answer,
    ApprovalAnswer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    DeclineWithReason,
    InputQuestion,
    Question,
    QuestionInterrupted,
    SelectQuestion,
)
from fisk_ai.util.sanitize import single_line

APPROVAL_CHOICES = (
    ("1", ApprovalChoice.NO, "No, do not run it"),
    ("2", ApprovalChoice.ONCE, "Yes, run it once"),
    ("3", ApprovalChoice.ALWAYS, "Always: {always}"),
    ("4", ApprovalChoice.NO, "No, and tell the agent why"),
)
"""The numbered choices, No first; the fourth asks for the sentence the model reads."""
TELL_WHY = "4"


class InputClosed(QuestionInterrupted):
    """The input ended (Ctrl-D, a closed stdin) while a question waited on it."""


class TerminalPrompter:
    """Asks on ``output`` (stderr) and reads the answer from ``input`` (stdin), one at a time."""

    def __init__(
        self, input_stream: TextIO, output_stream: TextIO, *, reporter: Reporter | None = None
    ) -> None:
        self._input = input_stream
        self._output = output_stream
        self._reporter = reporter
        self._pending: asyncio.Future[str] | None = None
        self._lock = asyncio.Lock()

    def can_prompt(self) -> bool:
        try:
            return self._input.isatty() and self._output.isatty()
        except ValueError:  # a closed stream
            return False

    def interrupt(self) -> None:
        """Give up the question on screen (Ctrl-C): the run stops rather than taking an answer."""
        if self._pending is not None and not self._pending.done():
            self._pending.set_exception(QuestionInterrupted("the question was interrupted"))

    async def ask(self, question: Question) -> Answer:
        async with self._lock:
            if self._reporter is not None:
                self._reporter.report(PaneState.BLOCKED, blocked_reason(question))
            try:
                return await self._ask(question)
            finally:
                if self._reporter is not None:
                    self._reporter.report(PaneState.WORKING)

    async def _ask(self, question: Question) -> Answer:
        if isinstance(question, ApprovalQuestion):
            return await self._approve(question)
        if isinstance(question, ConfirmQuestion):
            reply = await self._read(f"\n{single_line(question.question, 500)} [y/N]: ")
            return reply.strip().lower() in ("y", "yes")
        if isinstance(question, SelectQuestion):
            return await self._select(question)
        return await self._input_text(question)

    async def _approve(self, question: ApprovalQuestion) -> ApprovalAnswer:
        command = single_line(question.command)
        self._write(
            f'\nconfirmation required: "{command}" carries tag "{single_line(question.trigger)}"\n'
            f"{CALL_PREFIX}{' '.join(question.shell_words())}\n"
            "Run this command?\n"
        )
        for number, _, label in APPROVAL_CHOICES:
            self._write(f"  {number}) {label.format(always=question.always_covers())}\n")
        while True:
            reply = (await self._read("Choice [1]: ")).strip() or "1"
            chosen = next(
                (choice for number, choice, _ in APPROVAL_CHOICES if number == reply), None
            )
            if chosen is None:
                continue
            if reply == TELL_WHY:
                said = (await self._read("Why (one line, the agent reads it): ")).strip()
                return DeclineWithReason(said) if said else ApprovalChoice.NO
            if chosen is ApprovalChoice.ALWAYS:
                self._write(f'confirmation: will not ask again for "{command}" this conversation\n')
            return chosen

    async def _select(self, question: SelectQuestion) -> int | None:
        self._write(f"\n{single_line(question.question, 500)}\n")
        for number, option in enumerate(question.options, start=1):
            self._write(f"  {number}) {single_line(option, 500)}\n")
        while True:
            reply = (
                await self._read(f"Choice (1-{len(question.options)}, empty for none): ")
            ).strip()
            if not reply:
                return None
            if reply.isdigit() and 1 <= int(reply) <= len(question.options):
                return int(reply) - 1

    async def _input_text(self, question: InputQuestion) -> str:
        default = single_line(question.default, 500)
        suffix = f" [{default}]" if default else ""
        reply = (await self._read(f"\n{single_line(question.question, 500)}{suffix}: ")).rstrip(
            "\n"
        )
        return reply if reply else question.default

    def _write(self, text: str) -> None:
        self._output.write(text)
        self._output.flush()

    async def _read(self, prompt: str) -> str:
        """One line from the input without blocking the event loop; end of input interrupts."""
        self._write(prompt)
        loop = asyncio.get_running_loop()
        pending: asyncio.Future[str] = loop.create_future()
        self._pending = pending
        descriptor = self._input.fileno()
        buffer = bytearray()

        def readable() -> None:
            try:
                chunk = os.read(descriptor, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                if not pending.done():
                    pending.set_exception(InputClosed("the input was closed"))
                return
            buffer.extend(chunk)
            if b"\n" in buffer and not pending.done():
                pending.set_result(buffer.split(b"\n", 1)[0].decode(errors="replace"))

        loop.add_reader(descriptor, readable)
        try:
            return await pending
        finally:
            loop.remove_reader(descriptor)
            self._pending = None
            with contextlib.suppress(Exception):
                self._output.flush()
