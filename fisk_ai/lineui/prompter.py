"""Questions at the terminal: rendered on stderr, answered on stdin, No first.

The approval list puts No first so a reflexive Enter declines. Model-supplied text is stripped of
control sequences before it is shown, so an argument cannot spoof what the operator reads.
Interrupting a question, or closing its input, is not an answer: it raises QuestionInterrupted.
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
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    InputQuestion,
    Question,
    QuestionInterrupted,
    SelectQuestion,
)
from fisk_ai.util.sanitize import single_line

APPROVAL_CHOICES = (
    (ApprovalChoice.NO, "No, do not run it"),
    (ApprovalChoice.ONCE, "Yes, run it once"),
    (
        ApprovalChoice.ALWAYS,
        'Yes, and allow "{command}" (any arguments) for the rest of this conversation',
    ),
)


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

    async def _approve(self, question: ApprovalQuestion) -> ApprovalChoice:
        command = single_line(question.command)
        self._write(
            f'\nconfirmation required: "{command}" carries tag "{single_line(question.trigger)}"\n'
            f"{CALL_PREFIX}{single_line(question.display, 2000)}\n"
            "Run this command?\n"
        )
        for number, (_, label) in enumerate(APPROVAL_CHOICES, start=1):
            self._write(f"  {number}) {label.format(command=command)}\n")
        while True:
            reply = (await self._read("Choice [1]: ")).strip()
            if reply in ("", "1"):
                return ApprovalChoice.NO
            if reply in ("2", "3"):
                choice = APPROVAL_CHOICES[int(reply) - 1][0]
                if choice is ApprovalChoice.ALWAYS:
                    self._write(
                        f'confirmation: will not ask again for "{command}" this conversation\n'
                    )
                return choice

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
                    pending.set_exception(QuestionInterrupted("the input was closed"))
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
