"""The --no-tui surface: the answer alone on stdout, everything else on stderr.

Only the final answer goes to stdout, so a pipe receives the answer and nothing else: tool calls,
narration, thinking (with --thinking), warnings and the run summary go to stderr.
"""

from __future__ import annotations

import math
from typing import TextIO, assert_never

from fisk_ai.agent.events import (
    Event,
    PromptEvent,
    StatusEvent,
    StatusPhase,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from fisk_ai.presentation import (
    RESULT_PREFIX,
    retry_text,
    thinking_lines,
    tool_call_line,
    tool_result_text,
    warning_text,
)
from fisk_ai.tools.builtin.hitl import HITL_TOOL_NAMES
from fisk_ai.util.sanitize import strip_control


class LineSurface:
    """Writes a run's events as lines; keeps the final answer for the caller to print."""

    def __init__(
        self,
        stderr: TextIO,
        *,
        tool_output: bool = False,
        thinking: bool = False,
        verbose: bool = False,
        width: int | None = None,
    ) -> None:
        self._stderr = stderr
        self._tool_output = tool_output
        self._thinking = thinking
        self._verbose = verbose
        self._width = width
        self._silent_calls: set[str] = set()
        self.answer = ""

    def emit(self, event: Event) -> None:
        match event:
            case TextEvent():
                if event.final:
                    self.answer = event.text
                elif event.text.strip():
                    self._line("")
                    self._line(strip_control(event.text).strip())
            case ThinkingEvent():
                if self._thinking:
                    for line in thinking_lines(event.text):
                        self._line(line)
            case ToolCallEvent():
                self._call(event)
            case ToolResultEvent():
                self._result(event)
            case WarningEvent():
                self._line(f"warning: {warning_text(event)}")
            case StatusEvent():
                self._status(event)
            case PromptEvent():
                pass  # the operator's own words
            case _:
                assert_never(event)

    def _result(self, event: ToolResultEvent) -> None:
        if self._tool_output and event.call_id not in self._silent_calls:
            self._line(RESULT_PREFIX)
            self._line(tool_result_text(event).rstrip("\n"))

    def _status(self, event: StatusEvent) -> None:
        # Progress is the pane's and the summary's to show; a wait on a busy model is said, or
        # a run would sit silent through its retries.
        if event.phase == StatusPhase.RETRYING:
            wait = math.ceil(event.wait_seconds)
            self._line(f"model busy: {retry_text(wait, event.attempt, event.attempts)}")

    def _call(self, event: ToolCallEvent) -> None:
        # The human-in-the-loop tools draw their own question; their call lines are noise
        # unless verbose.
        if event.name in HITL_TOOL_NAMES and not self._verbose:
            self._silent_calls.add(event.id)
            return
        self._line(tool_call_line(event, self._width))

    def _line(self, text: str) -> None:
        self._stderr.write(text + "\n")
        self._stderr.flush()


def write_answer(answer: str, stdout: TextIO, *, render: bool) -> None:
    """The answer on stdout: markdown rendered for a terminal, raw for a pipe."""
    text = strip_control(answer).strip()
    if not text:
        return
    if not render:
        stdout.write(text + "\n")
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console(file=stdout, highlight=False).print(Markdown(text))
