"""The --no-tui surface: the answer alone on stdout, everything else on stderr.

Only the final answer goes to stdout, so a pipe receives the answer and nothing else: tool calls,
narration, thinking (with --thinking), warnings and the run summary go to stderr. On a terminal,
each model turn's text is also written on stderr as it arrives (``StreamingLineSurface``), since
a turn is known to be the answer only once it is complete.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, TextIO, assert_never

from fisk_ai.agent.events import (
    DeltaEvent,
    Event,
    PromptEvent,
    StatusEvent,
    StatusPhase,
    TextDeltaEvent,
    TextEvent,
    ThinkingDeltaEvent,
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

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from rich.console import Console


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

    def close(self) -> None:
        """The run is over; nothing more is written."""

    def _result(self, event: ToolResultEvent) -> None:
        if self._tool_output and event.call_id not in self._silent_calls:
            self._line(RESULT_PREFIX)
            self._line(tool_result_text(event).rstrip("\n"))
            # The guide's transcript parts each output from the next call with a blank line,
            # whether or not the output ended its last line.
            self._line("")

    def _status(self, event: StatusEvent) -> None:
        # Progress is the pane's and the summary's to show; a wait on a busy model is said, or
        # a run would sit silent through its retries.
        if event.phase == StatusPhase.RETRYING:
            self._line(retry_notice(event))

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


def retry_notice(event: StatusEvent) -> str:
    """A model call tried again: the wait and the attempt."""
    wait = math.ceil(event.wait_seconds)
    return f"model busy: {retry_text(wait, event.attempt, event.attempts)}"


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


SYNC_BEGIN = "\x1b[?2026h"
SYNC_END = "\x1b[?2026l"
"""Synchronized output: a terminal that knows the mode shows what lies between the two at once,
so a block's plain text and its rendering never share a frame; others ignore both."""

ERASE_BELOW = "\x1b[J"
RESTART_NOTE = "the text so far is void and starts over"


class StreamingLineSurface(LineSurface):
    """The line surface that also writes each model turn's text on ``stderr`` (a terminal) as
    it arrives, and with ``thinking`` its reasoning line by line.

    A turn's text is written here because nobody knows it is the answer before the turn ends:
    stdout keeps receiving the answer alone, whole, once it is known to be final. When stdout is
    the same terminal, the caller prints nothing more: ``shown_answer`` is the answer already on
    screen. With ``render``, each markdown block is rendered once a later one has begun (the
    block being written shows as plain text until then, and its rendering takes its place).
    """

    def __init__(
        self,
        stderr: TextIO,
        *,
        render: bool,
        tool_output: bool = False,
        thinking: bool = False,
        verbose: bool = False,
        width: int | None = None,
    ) -> None:
        super().__init__(
            stderr, tool_output=tool_output, thinking=thinking, verbose=verbose, width=width
        )
        self._live = LiveText(stderr, render=render)
        self._thought = ""
        """The reasoning of this model call that arrived in pieces and is not yet accounted for
        by a complete thinking event."""
        self._thought_printed = 0
        """How much of ``_thought`` is on screen (whole lines)."""
        self.shown_answer: str | None = None

    def emit_delta(self, event: DeltaEvent) -> None:
        match event:
            case TextDeltaEvent():
                self._live.add(event.text)
            case ThinkingDeltaEvent():
                if self._thinking:
                    self._add_thought(event.text)
            case _:
                assert_never(event)

    def emit(self, event: Event) -> None:
        if isinstance(event, TextEvent) and self._live.started:
            shown = self._live.finish(event.text)
            if event.final:
                self.answer = event.text
                self.shown_answer = event.text if shown else None
            elif not shown:
                super().emit(event)
        elif isinstance(event, ThinkingEvent) and self._thinking and self._thought:
            self._finish_thought(event)
        elif isinstance(event, StatusEvent) and event.phase == StatusPhase.RETRYING:
            self._restart(event)
        else:
            super().emit(event)

    def close(self) -> None:
        """The run is over: end the line of text a stopped model call left open."""
        self._live.interrupt()

    def _restart(self, event: StatusEvent) -> None:
        # The next attempt writes the whole text again, so what was shown of this one is said
        # to be void rather than left to read as the start of the answer.
        void = self._live.void() or self._thought_printed > 0
        self._thought, self._thought_printed = "", 0
        notice = retry_notice(event)
        self._line(f"{notice}; {RESTART_NOTE}" if void else notice)

    def _add_thought(self, piece: str) -> None:
        self._thought += piece
        complete = self._thought.rfind("\n") + 1
        if complete > self._thought_printed:
            for line in thinking_lines(self._thought[self._thought_printed : complete]):
                self._line(line)
            self._thought_printed = complete

    def _finish_thought(self, event: ThinkingEvent) -> None:
        text = event.text
        if not self._thought.startswith(text):
            self._thought, self._thought_printed = "", 0
            super().emit(event)
            return
        for line in thinking_lines(text[self._thought_printed :]):
            self._line(line)
        self._thought = self._thought[len(text) :]
        self._thought_printed = max(0, self._thought_printed - len(text))

    def _line(self, text: str) -> None:
        self._live.interrupt()
        super()._line(text)


class LiveText:
    """One model call's text on a terminal as it arrives, after a blank line as narration is.

    Plain, the text is written as it comes, leading and trailing whitespace left out, so a
    finished turn reads as the whole text would. With ``render``, a markdown block is rendered
    once the next top-level block begins (and the last one when the turn ends): the plain text
    of the block in progress is erased and its rendering written in its place, in one write
    inside synchronized output. A block whose plain text no longer fits on the screen stays as
    written, since the rows above the screen cannot be reached; it is never printed twice.
    """

    def __init__(self, stream: TextIO, *, render: bool) -> None:
        self._stream = stream
        self._render_blocks = render
        self._console: Console | None = None
        """Made at the first rendering: rich costs its import only to a run that shows text."""
        self._received = ""
        """The pieces of this call as they came, to be checked against the complete text."""
        self._pending = ""
        """Text of the block in progress (all of it when plain): not rendered yet."""
        self._written = 0
        """How much of ``_pending`` is on the screen as plain text."""
        self._shown = False
        """Something of this call is on the screen."""
        self._gap = False
        """A blank line is owed before the next visible text (between two blocks)."""
        self._fixed = False
        """The plain text of the block in progress can no longer be replaced."""
        self._open = False
        """The cursor is at the end of text of this call, not at a line's start."""

    @property
    def started(self) -> bool:
        """Pieces of this call have arrived."""
        return bool(self._received)

    def add(self, piece: str) -> None:
        self._received += piece
        self._pending += strip_control(piece)
        if not self._shown:
            self._pending = self._pending.lstrip()
            if not self._pending:
                return
            self._shown = True
            self._write("\n")
        if self._render_blocks:
            self._render_complete_blocks(new_line="\n" in piece)
        self._write_plain_tail()

    def finish(self, text: str) -> bool:
        """The call's complete text arrived: show the rest, end the line. Returns whether the
        text is on the screen (False when the pieces were not its beginning)."""
        if not text.startswith(self._received):
            self.void()
            return False
        self.add(text[len(self._received) :])
        shown = self._shown
        if self._render_blocks and self._pending.strip():
            self._end_blocks()
        elif self._open:
            self._write("\n")
        self._reset()
        return shown

    def void(self) -> bool:
        """The call is tried again: end the line; returns whether anything was shown."""
        shown = self._shown
        self.interrupt()
        self._reset()
        return shown

    def interrupt(self) -> None:
        """Another line is written now: end the one in progress, which then stays as it is."""
        if self._open:
            self._write("\n")
            self._pending = self._pending[self._written :].lstrip()
            self._written = 0
            self._open = False
            self._fixed = self._render_blocks

    def _reset(self) -> None:
        self._received = self._pending = ""
        self._written = 0
        self._shown = self._gap = self._fixed = self._open = False

    def _write_plain_tail(self) -> None:
        visible = self._pending.rstrip()
        if len(visible) <= self._written:
            return
        if self._gap:
            self._write("\n")
            self._gap = False
        self._write(visible[self._written :])
        self._open = True
        if not self._render_blocks:
            # Plain text is never replaced: only the whitespace held back is kept.
            self._pending = self._pending[len(visible) :]
        else:
            self._written = len(visible)

    def _render_complete_blocks(self, *, new_line: bool) -> None:
        complete_lines = self._pending[: self._pending.rfind("\n") + 1]
        partial_line = self._pending[len(complete_lines) :]
        # A line still being written can turn into something else ("#" into "#tag"), except
        # after a blank line, where whatever it becomes begins a block of its own.
        last_line = complete_lines[:-1].rsplit("\n", 1)[-1]
        after_blank = bool(complete_lines) and not last_line.strip()
        if after_blank and partial_line.strip():
            parsed = self._pending
        elif new_line:
            parsed = complete_lines
        else:
            return
        start = last_block_start(parsed)
        if start == 0:
            return
        on_screen = self._pending[: self._written]
        blocks, self._pending = self._pending[:start], self._pending[start:]
        if self._replaceable(on_screen):
            self._render(blocks, on_screen)
            self._gap = True
        elif self._written > start:
            # The next block has begun on the screen already, right after this one's text.
            self._written -= start
        else:
            self._leave_plain(blocks)
            self._gap = True

    def _end_blocks(self) -> None:
        """The turn's text is complete: the block in progress is too."""
        on_screen = self._pending[: self._written]
        if self._replaceable(on_screen):
            self._render(self._pending, on_screen)
        else:
            self._leave_plain(self._pending)

    def _replaceable(self, on_screen: str) -> bool:
        """Whether ``on_screen``, the plain text of the block in progress, can be erased: the
        rows above the screen cannot be reached, nor can text another line was written after."""
        console = self._terminal()
        return not self._fixed and terminal_rows(on_screen, console.width) < console.height

    def _leave_plain(self, blocks: str) -> None:
        """Keep the plain text of ``blocks`` as written, show the rest of it, end its line."""
        self._write(blocks.rstrip()[self._written :] + "\n")
        self._written = 0
        self._fixed = self._open = False

    def _render(self, blocks: str, on_screen: str) -> None:
        """Write the rendering of ``blocks`` in place of ``on_screen``, their plain text."""
        from rich.markdown import Markdown

        console = self._terminal()
        with console.capture() as captured:
            console.print(Markdown(blocks.strip()))
        # Rendered alone, a list opens with a blank line; the gap between blocks is ours.
        rendering = captured.get().strip("\n") + "\n"
        if on_screen:
            rows = terminal_rows(on_screen, console.width)
            up = f"\x1b[{rows - 1}A" if rows > 1 else ""
            rendering = "\r" + up + ERASE_BELOW + rendering
        elif self._gap:
            rendering = "\n" + rendering
        self._write(SYNC_BEGIN + rendering + SYNC_END)
        self._written = 0
        self._gap = self._open = False

    def _terminal(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self._stream, highlight=False)
        return self._console

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()


def terminal_rows(text: str, width: int) -> int:
    """The rows ``text`` fills on a terminal ``width`` cells wide, written from a row's first
    column: the row the cursor ends on counts."""
    from rich.cells import cell_len

    width = max(1, width)
    return sum(max(1, -(-cell_len(line.expandtabs()) // width)) for line in text.split("\n"))


def last_block_start(text: str) -> int:
    """Where the last top-level markdown block of ``text`` begins, when a block comes before it
    (every block before it is then complete); 0 when ``text`` holds one block or none."""
    starts = [
        token.map[0]
        for token in _markdown_parser().parse(text)
        if token.level == 0 and token.nesting >= 0 and token.map is not None
    ]
    if len(starts) < 2 or starts[-1] == 0:
        return 0
    lines = text.splitlines(keepends=True)
    return sum(len(line) for line in lines[: starts[-1]])


@functools.cache
def _markdown_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # The parser rich's Markdown uses, so a block ends where its rendering says it does.
    return MarkdownIt().enable("strikethrough").enable("table")
