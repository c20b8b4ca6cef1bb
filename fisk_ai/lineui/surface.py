"""The --no-tui surface: the answer alone on stdout, everything else on stderr.

Only the final answer goes to stdout, so a pipe receives the answer and nothing else: tool calls,
narration, thinking (with --thinking), warnings and the run summary go to stderr.
"""

from __future__ import annotations

from typing import TextIO

from fisk_ai.agent.events import (
    Event,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from fisk_ai.lineui.lines import (
    RESULT_PREFIX,
    thinking_lines,
    tool_call_line,
    tool_result_text,
)
from fisk_ai.util.sanitize import single_line, strip_control

# The human-in-the-loop tools draw their own question; their call lines are noise unless verbose.
SELF_RENDERED_TOOLS = frozenset({"ask_human_confirm", "ask_human_select", "ask_human_input"})


def warning_text(event: WarningEvent) -> str:
    """A warning event as one sentence: its error when it has one, else its kind and subject."""
    if event.error:
        return single_line(event.error)
    subject = f" ({single_line(event.name)})" if event.name else ""
    return single_line(event.kind.replace("_", " ")) + subject


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
        if isinstance(event, TextEvent):
            if event.final:
                self.answer = event.text
            elif event.text.strip():
                self._line("")
                self._line(strip_control(event.text).strip())
        elif isinstance(event, ThinkingEvent):
            if self._thinking:
                for line in thinking_lines(event.text):
                    self._line(line)
        elif isinstance(event, ToolCallEvent):
            if event.name in SELF_RENDERED_TOOLS and not self._verbose:
                self._silent_calls.add(event.id)
                return
            self._line(tool_call_line(event, self._width))
        elif isinstance(event, ToolResultEvent):
            if self._tool_output and event.call_id not in self._silent_calls:
                self._line(RESULT_PREFIX)
                self._line(tool_result_text(event).rstrip("\n"))
        elif isinstance(event, WarningEvent):
            self._line(f"warning: {warning_text(event)}")

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
