"""The transcript as a model of logical blocks, for a viewport that draws only the rows it shows.

Every logical line lives once in a flat list, index-aligned with its block and its lowercased
twin, so search addresses a line by index and appending costs only the new lines. Wrapping to a
width is worked out lazily, per block, and kept per width: a resize re-wraps without rebuilding
anything, and folding changes one block's row count rather than the whole layout.
"""

from __future__ import annotations

import enum
import json
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, assert_never

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
    thinking_lines,
    tool_call_line,
    warning_text,
)
from fisk_ai.tools.builtin.hitl import (
    ASK_HUMAN_CONFIRM,
    ASK_HUMAN_SELECT,
    HITL_TOOL_NAMES,
    shown_text,
)
from fisk_ai.tui.markdown import (
    CELL_SEPARATOR,
    HEADER_CROSSING,
    RULE_CHARACTER,
    Alignment,
    Emphasis,
    MarkdownLine,
    Span,
    Table,
    cut_spans,
    line_width,
    looks_like_markdown,
    markdown_lines,
)
from fisk_ai.util.sanitize import single_line, strip_control

if TYPE_CHECKING:
    from fisk_ai.sessions import Conversation

PROMPT_PREFIX = "> "
WARNING_PREFIX = "warning: "
ANSWER_MARKER = "--- answer ---"
QUESTION_PREFIX = "? "
ANSWER_PREFIX = "= "
HEADER_SEPARATOR = " \u00b7 "
TAB_WIDTH = 4
DECLINED_MARK = "declined"
FAILED_MARK = "failed"
NO_OUTPUT = "no output"
SHOWN_WHOLE = 8
"""A result that fits in this many rows of ``FOLD_WIDTH`` columns is never folded: a cowsay
cow (8 lines) reads whole."""
FOLD_WIDTH = 80
"""The width a result is measured at to decide whether it folds, so whether it does is the
same at every width: the narrowest terminal the workstation is laid out for."""
PREVIEW_LINES = 4
"""The first lines of a longer result that stay on screen while it is folded, one row each."""
CLIPPED_MARK = "\u2026"
MIN_COLUMN_WIDTH = 6
"""A table column is not squeezed below this many cells (nor below its own text) while the
others can still give room."""


def _json_object(text: str) -> dict[str, object] | None:
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        decoded = json.loads(text)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) else None


def question_lines(event: ToolCallEvent) -> list[str]:
    """An ask_human call as the question the operator was asked, and the options offered."""
    lines = [QUESTION_PREFIX + shown_text(str(event.input.get("question", "")))]
    options = event.input.get("options")
    if event.name == ASK_HUMAN_SELECT and isinstance(options, list):
        lines.append("  options: " + single_line(", ".join(str(option) for option in options), 500))
    return lines


def answer_text(tool: str, event: ToolResultEvent) -> str | None:
    """The operator's answer to an ask_human call, or None for a result that carries none (a
    harness error, a deferral), which is then shown as any result is."""
    decoded = None if event.is_error else _json_object(event.output)
    if decoded is None:
        return None
    reason = single_line(str(decoded.get("reason") or ""), 500)
    if tool == ASK_HUMAN_CONFIRM:
        if "confirmed" not in decoded:
            return None
        answer = "yes" if decoded["confirmed"] is True else "no"
    else:
        value = decoded.get("selected" if tool == ASK_HUMAN_SELECT else "value", ...)
        if value is ...:
            return None
        answer = "no answer" if value is None else single_line(str(value), 500)
    if reason and answer in ("no", "no answer"):
        answer += f" ({reason})"
    return ANSWER_PREFIX + answer


def result_header(event: ToolResultEvent, lines: int, seconds: int | None) -> str:
    """``<- exit 0 · 2s · 40 lines``: how the call ended, how long it took when that is known,
    and how much it said."""
    parts = []
    if event.is_error:
        parts.append("error")
    elif event.exec is not None and event.exec.exit_code != 0:
        parts.append(f"{FAILED_MARK} (exit {event.exec.exit_code})")
    elif event.exec is not None:
        parts.append("exit 0")
    if seconds is not None:
        parts.append(f"{seconds}s" if seconds else "<1s")
    parts.append(plural(lines, "line") if lines else NO_OUTPUT)
    return f"{RESULT_PREFIX} {HEADER_SEPARATOR.join(parts)}"


def declined_reason_of(event: ToolResultEvent) -> str | None:
    """The reason a gated call was refused, when ``event`` is that refusal: the loop answers a
    denied call with ``{"allowed": false, "reason": ...}`` rather than running it."""
    if event.is_error or '"allowed"' not in event.output:
        return None
    decoded = _json_object(event.output)
    if decoded is None or decoded.get("allowed") is not False:
        return None
    # What follows the first "; " is addressed to the model (the decision is final).
    reason = str(decoded.get("reason", "")).partition("; ")[0]
    return single_line(reason, 500)


class BlockKind(enum.StrEnum):
    PROMPT = "prompt"
    NARRATION = "narration"
    THINKING = "thinking"
    TOOL_CALL = "call"
    TOOL_OUTPUT = "output"
    ERROR = "error"
    META = "meta"
    WARNING = "warning"
    QUESTION = "question"
    ANSWER = "answer"


class RowKind(enum.StrEnum):
    """How a row is styled: the kind of its block, or one of the rows the viewport adds."""

    PROMPT = "prompt"
    NARRATION = "narration"
    THINKING = "thinking"
    TOOL_CALL = "call"
    TOOL_OUTPUT = "output"
    ERROR = "error"
    META = "meta"
    WARNING = "warning"
    QUESTION = "question"
    ANSWER = "answer"
    PLACEHOLDER = "placeholder"
    RESULT_HEADER = "result-header"
    BLANK = "blank"


@dataclass(frozen=True, slots=True)
class Block:
    """A run of logical lines ``[start, end)`` in the transcript. The first ``header`` lines
    head the block, and the ``preview`` lines after them stay visible too when the block is
    folded; the rest is its hidden body. A ``markdown`` block is drawn from its parsed markdown
    rather than line by line."""

    kind: BlockKind
    start: int
    end: int
    header: int = 0
    foldable: bool = False
    markdown: bool = False
    preview: int = 0

    @property
    def kept(self) -> int:
        """The lines shown while the block is folded."""
        return self.header + self.preview

    @property
    def body_size(self) -> int:
        """The lines a fold hides."""
        return self.end - self.start - self.kept


@dataclass(frozen=True, slots=True)
class Row:
    """One screen row: its text, how to style it, the block and logical line it belongs to.
    A row of markdown also carries its pieces with their emphasis; ``text`` is them joined."""

    text: str
    kind: RowKind
    block: int
    line: int
    spans: tuple[Span, ...] = ()


@dataclass(frozen=True, slots=True)
class Match:
    line: int
    block: int


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


LAST_RESULT_HINT = "(ctrl-o to expand)"
"""The fold line of the newest result names the key that works from the chat bar too."""
EARLIER_RESULT_HINT = "(Z in the transcript expands all)"


def placeholder_text(block: Block, *, last_result: bool = False) -> str:
    """The fold line under a folded block's visible lines: how much it hides and the key
    that shows it."""
    if block.kind is BlockKind.THINKING:
        return f"+ {plural(block.body_size, 'line')} of thinking (z to expand)"
    count = (
        f"{block.body_size} more line" if block.body_size == 1 else f"{block.body_size} more lines"
    )
    hint = LAST_RESULT_HINT if last_result else EARLIER_RESULT_HINT
    return f"+ {count} {hint}"


def cell_width(text: str) -> int:
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def wrap_line(text: str, width: int) -> list[str]:
    """Cut a line into rows no wider than ``width`` cells, at the last space when there is one,
    so a word is split only when it is longer than a row."""
    if cell_width(text) <= max(width, 1):
        return [text]
    return [text[start:end] for start, end in wrap_offsets(text, width)]


def wrap_offsets(text: str, width: int) -> list[tuple[int, int]]:
    """Where ``wrap_line`` cuts ``text``: the ``[start, end)`` character range of each row; the
    space a row was cut at belongs to neither row."""
    width = max(width, 1)
    if cell_width(text) <= width:
        return [(0, len(text))]
    if not (text.isascii() or _one_cell_characters().issuperset(text)):
        return _wrap_cells(text, width)
    # Every character is one cell, so character offsets are cell offsets.
    ranges = []
    start = 0
    length = len(text)
    while length - start > width:
        cut = text.rfind(" ", start + 1, start + width + 1)
        if cut <= start:
            ranges.append((start, start + width))
            start += width
        else:
            ranges.append((start, cut))
            start = cut + 1
    ranges.append((start, length))
    return ranges


_ONE_CELL_RANGES = (
    (0x20, 0x7E),
    (0xA0, 0x2FF),
    (0x370, 0x482),
    (0x2010, 0x2027),
    (0x2030, 0x205E),
    (0x20A0, 0x20C0),
    (0x2100, 0x218B),
    (0x2190, 0x23FF),
    (0x2500, 0x25FF),
)
"""Where prose's usual non-ASCII characters are (Latin accents, Greek, Cyrillic, dashes and
curly quotes, currency, arrows, box drawing); only those of them one cell wide on their own are
taken."""
_one_cell: list[frozenset[str]] = []


def _one_cell_characters() -> frozenset[str]:
    """The characters of ``_ONE_CELL_RANGES`` that take one cell, as the terminal cell table
    measures them; worked out the first time text that is not ASCII is wrapped."""
    if not _one_cell:
        from rich.cells import get_character_cell_size

        characters = (
            chr(code) for first, last in _ONE_CELL_RANGES for code in range(first, last + 1)
        )
        _one_cell.append(
            frozenset(
                character for character in characters if get_character_cell_size(character) == 1
            )
        )
    return _one_cell[0]


def _wrap_cells(text: str, width: int) -> list[tuple[int, int]]:
    """``wrap_offsets`` for text that is not all ASCII, measured a grapheme at a time: a wide
    character counts two cells, a combining mark or a joined emoji stays with the character
    it belongs to, and a row ends at its last space as the ASCII path's rows do."""
    from rich.cells import split_graphemes

    graphemes, _ = split_graphemes(text)
    ranges = []
    start = 0
    used = 0
    space = -1
    used_before_space = 0
    for begin, end, size in graphemes:
        if used + size > width and begin > start:
            if text[begin] == " ":
                # A space at the edge ends the row and belongs to neither row.
                ranges.append((start, begin))
                start, used = end, 0
                continue
            if space > start:
                ranges.append((start, space))
                start = space + 1
                used -= used_before_space + 1
            if used + size > width and begin > start:
                ranges.append((start, begin))
                start, used = begin, 0
        if text[begin] == " " and begin > start:
            space, used_before_space = begin, used
        used += size
    ranges.append((start, len(text)))
    return ranges


def _takes_more_rows(lines: list[str], rows: int, width: int) -> bool:
    """Whether ``lines`` wrapped to ``width`` take more than ``rows`` rows; reads no further
    than it needs to."""
    taken = 0
    for line in lines:
        taken += max(1, -(-cell_width(line) // width))
        if taken > rows:
            return True
    return False


def clip_line(text: str, width: int) -> str:
    """The start of ``text`` that fits one row of ``width`` cells, cut at a space when it can
    be and marked as cut."""
    if cell_width(text) <= width:
        return text
    start, end = wrap_offsets(text, max(width - 1, 1))[0]
    return text[start:end] + CLIPPED_MARK


def _text_lines(text: str) -> list[str]:
    return strip_control(text).expandtabs(TAB_WIDTH).split("\n")


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


def _closes_fence(fence: str, marks: re.Match[str] | None) -> bool:
    """A fence closes on a run of its own mark at least as long, with nothing after it."""
    return marks is not None and marks.group(1).startswith(fence) and not marks.group(2).strip()


def completed_prose(text: str) -> int:
    """How much of ``text``, prose the model is still writing, is whole markdown blocks: the
    end of its last blank line outside a code fence. What follows may still change how it is
    drawn; what precedes it never will."""
    completed = 0
    fence = ""
    position = 0
    while (end := text.find("\n", position)) >= 0:
        line = text[position:end]
        marks = _FENCE.match(line)
        if fence:
            # A fence closes on a run of its own mark at least as long, with nothing after.
            if (
                marks is not None
                and marks.group(1).startswith(fence)
                and not marks.group(2).strip()
            ):
                fence = ""
        elif marks is not None:
            fence = marks.group(1)
        elif not line.strip() and text[:position].strip():
            completed = end + 1
        position = end + 1
    return completed


@dataclass
class _Streamed:
    """What one kind of delta has drawn so far of the model call in flight: ``text`` whole,
    in the blocks from ``first`` on. The prose before ``settled`` is whole markdown blocks,
    laid out for good in the blocks before ``settled_end``; one block after them shows the
    rest, which the next piece may change."""

    kind: BlockKind
    first: int
    text: str = ""
    settled: int = 0
    settled_end: int = 0
    markdown: bool = False


class _Layout:
    """Row counts per block at one width, with prefix sums rebuilt lazily from the first
    block that changed."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.rows: list[int] = []
        self.starts: list[int] = []
        self.valid = 0
        self.line_rows: dict[int, list[str]] = {}
        self.markdown_rows: dict[int, list[Row]] = {}

    def invalidate(self, block: int) -> None:
        self.valid = min(self.valid, block)


class Transcript:
    """The logical transcript: blocks of plain lines with their folding state."""

    def __init__(self, *, output_folded: bool = True, thinking_folded: bool = True) -> None:
        """``thinking_folded`` is the default, as reasoning is shown only when asked for
        (``--thinking``); ``z`` shows it."""
        self.lines: list[str] = []
        self._lowered: list[str] = []
        self._line_block: list[int] = []
        self.blocks: list[Block] = []
        self._folded: list[bool] = []
        self.output_folded = output_folded
        self.thinking_folded = thinking_folded
        self._layouts: dict[int, _Layout] = {}
        self._markdown: dict[int, list[MarkdownLine]] = {}
        self._questions: dict[str, str] = {}
        """The ask_human calls waiting for their answer: call id to tool name."""
        self.last_result: int | None = None
        """The newest tool result long enough to fold, which ``toggle_last_result`` acts on."""
        self._streamed: list[_Streamed] = []
        """The model call in flight as its deltas drew it, one entry per kind in the order
        they came; its blocks end the transcript until its complete events replace them."""

    def __len__(self) -> int:
        return len(self.blocks)

    @property
    def line_count(self) -> int:
        return len(self.lines)

    def add_event(self, event: Event, *, seconds: int | None = None) -> None:
        """Add what one agent event shows; status events show nothing here. ``seconds`` is
        how long a tool call took, for its result's header, when the surface timed it.

        The drawn deltas of the call in flight give way to its complete events: a text or
        thinking event takes the place of the deltas of its kind, a retry or the next step
        (a tool call, a result, a prompt) voids what is left of them."""
        if not self._streamed:
            self._add_event(event, seconds)
            return
        match event:
            case TextEvent() | ThinkingEvent():
                kind = BlockKind.NARRATION if isinstance(event, TextEvent) else BlockKind.THINKING
                kept = list(self._streamed)
                replaced = next((entry for entry in kept if entry.kind is kind), None)
                if replaced is not None:
                    kept.remove(replaced)
            case (
                StatusEvent(phase=StatusPhase.RETRYING)
                | ToolCallEvent()
                | ToolResultEvent()
                | PromptEvent()
            ):
                kept = []
            case WarningEvent():
                kept = list(self._streamed)
            case StatusEvent():
                return
            case _:
                assert_never(event)
        self._drop_streamed()
        self._add_event(event, seconds)
        for entry in kept:
            prose = entry.kind is BlockKind.NARRATION
            self.add_delta(TextDeltaEvent(entry.text) if prose else ThinkingDeltaEvent(entry.text))

    def _add_event(self, event: Event, seconds: int | None) -> None:
        match event:
            case PromptEvent():
                self.add_prompt(event.text)
            case TextEvent():
                if event.final:
                    self.add_block(BlockKind.META, [ANSWER_MARKER])
                self.add_narration(event.text)
            case ThinkingEvent():
                self.add_thinking(event.text)
            case ToolCallEvent() if event.name in HITL_TOOL_NAMES:
                self._questions[event.id] = event.name
                self.add_block(BlockKind.QUESTION, question_lines(event))
            case ToolCallEvent():
                self.add_block(BlockKind.TOOL_CALL, [tool_call_line(event)])
            case ToolResultEvent():
                self._add_result(event, seconds)
            case WarningEvent():
                self.add_block(BlockKind.WARNING, [WARNING_PREFIX + warning_text(event)])
            case StatusEvent():
                pass
            case _:
                assert_never(event)

    def _add_result(self, event: ToolResultEvent, seconds: int | None) -> None:
        """A result under its call, headed by how it ended, how long it took and how many
        lines it holds. A declined call says so on its header line and does not fold; a
        command that exited non-zero is drawn as an error, so neither reads like ordinary
        output when folded. An ask_human call's result is the operator's answer."""
        tool = self._questions.pop(event.call_id, "")
        answer = answer_text(tool, event) if tool else None
        if answer is not None:
            self.add_block(BlockKind.ANSWER, [answer])
            return
        refusal = declined_reason_of(event)
        if refusal is not None:
            self.add_block(BlockKind.ERROR, [f"{RESULT_PREFIX} {DECLINED_MARK}: {refusal}"])
            return
        failed = not event.is_error and event.exec is not None and event.exec.exit_code != 0
        kind = BlockKind.ERROR if event.is_error or failed else BlockKind.TOOL_OUTPUT
        # The header says how the call ended; the body is the output as it came, and a
        # trailing line break ends its last line rather than starting another one.
        text = strip_control(event.output).expandtabs(TAB_WIDTH).rstrip("\n")
        body = text.split("\n") if text and not text.isspace() else []
        header = result_header(event, len(body), seconds)
        folds = _takes_more_rows(body, SHOWN_WHOLE, FOLD_WIDTH)
        index = self.add_block(
            kind,
            [header, *body],
            header=1,
            foldable=folds,
            # At least one line stays behind the fold line, so it always has something to show.
            preview=min(PREVIEW_LINES, len(body) - 1) if folds else 0,
        )
        if folds:
            self.last_result = index

    def add_events(self, events: Iterable[Event], *, seconds: int | None = None) -> None:
        for event in events:
            self.add_event(event, seconds=seconds)

    def add_prompt(self, text: str) -> None:
        lines = _text_lines(text)
        self.add_block(BlockKind.PROMPT, [PROMPT_PREFIX + lines[0], *lines[1:]])

    def add_thinking(self, text: str) -> None:
        lines = thinking_lines(text)
        if lines:
            self.add_block(BlockKind.THINKING, lines, foldable=True)

    def add_narration(self, text: str) -> None:
        """Add the model's prose; drawn as markdown when it holds any."""
        lines = _text_lines(text)
        self.add_block(BlockKind.NARRATION, lines, markdown=looks_like_markdown("\n".join(lines)))

    def add_meta(self, text: str) -> None:
        self.add_block(BlockKind.META, _text_lines(text))

    @property
    def streaming(self) -> bool:
        """Whether the end of the transcript is a model call's deltas, not yet its events."""
        return bool(self._streamed)

    def add_delta(self, event: DeltaEvent) -> None:
        """Draw the next piece of the model call in flight. Only the prose after the last
        whole markdown block is parsed and laid out again; thinking is redrawn whole, as a
        folded block shows one line of it however long it grows."""
        kind = BlockKind.NARRATION if isinstance(event, TextDeltaEvent) else BlockKind.THINKING
        current = self._streamed[-1] if self._streamed else None
        if current is None or current.kind is not kind:
            current = _Streamed(kind, len(self.blocks), settled_end=len(self.blocks))
            self._streamed.append(current)
        current.text += event.text
        self._redraw(current)

    def keep_streamed(self, note: str) -> None:
        """The call in flight ended without its events (stopped, failed): what it drew stays,
        as drawn, under ``note``; nothing replaces it any more. A call that drew nothing
        leaves nothing."""
        if not self._streamed:
            return
        shown = len(self.blocks) > self._streamed[0].first
        self._streamed.clear()
        if shown:
            self.add_meta(note)

    def _redraw(self, current: _Streamed) -> None:
        if current.kind is BlockKind.THINKING:
            self._truncate(current.first)
            self.add_thinking(current.text)
            return
        pending = current.text[current.settled :]
        if not current.markdown and looks_like_markdown(pending):
            # Once it is markdown the whole answer is drawn as markdown, as its event will be.
            current.markdown = True
            current.settled = 0
            current.settled_end = current.first
            pending = current.text
        self._truncate(current.settled_end)
        completed = completed_prose(pending)
        if completed:
            self._add_prose(pending[:completed], markdown=current.markdown)
            current.settled += completed
            current.settled_end = len(self.blocks)
        self._add_prose(pending[completed:], markdown=current.markdown)

    def _add_prose(self, text: str, *, markdown: bool) -> None:
        text = text.strip("\n")
        if text.strip():
            lines = _text_lines(text)
            self.add_block(BlockKind.NARRATION, lines, markdown=markdown)

    def _drop_streamed(self) -> None:
        if self._streamed:
            self._truncate(self._streamed[0].first)
            self._streamed.clear()

    def _truncate(self, index: int) -> None:
        """Remove the blocks from ``index`` on, with everything laid out for them."""
        count = len(self.blocks)
        if index >= count:
            return
        start = self.blocks[index].start
        line_count = len(self.lines)
        del self.lines[start:]
        del self._lowered[start:]
        del self._line_block[start:]
        del self.blocks[index:]
        del self._folded[index:]
        for block in range(index, count):
            self._markdown.pop(block, None)
        for layout in self._layouts.values():
            layout.invalidate(index)
            for block in range(index, count):
                layout.markdown_rows.pop(block, None)
            for line in range(start, line_count):
                layout.line_rows.pop(line, None)
        if self.last_result is not None and self.last_result >= index:
            self.last_result = None

    def add_block(
        self,
        kind: BlockKind,
        lines: list[str],
        *,
        header: int = 0,
        foldable: bool = False,
        markdown: bool = False,
        preview: int = 0,
    ) -> int:
        """Append a block of already sanitised lines and return its index."""
        index = len(self.blocks)
        start = len(self.lines)
        self.lines.extend(lines)
        self._lowered.extend(line.casefold() for line in lines)
        self._line_block.extend([index] * len(lines))
        block = Block(
            kind,
            start,
            len(self.lines),
            header,
            foldable and len(lines) > header + preview,
            markdown,
            preview,
        )
        self.blocks.append(block)
        self._folded.append(block.foldable and self._folds_by_default(kind))
        return index

    def _folds_by_default(self, kind: BlockKind) -> bool:
        if kind is BlockKind.THINKING:
            return self.thinking_folded
        return self.output_folded

    def is_folded(self, block: int) -> bool:
        return self._folded[block]

    def set_folded(self, block: int, folded: bool) -> None:
        if not self.blocks[block].foldable or self._folded[block] == folded:
            return
        self._folded[block] = folded
        for layout in self._layouts.values():
            layout.invalidate(block)

    def toggle_block(self, block: int) -> bool:
        """Fold or unfold one block; returns whether it is folded now."""
        self.set_folded(block, not self._folded[block])
        return self._folded[block]

    def toggle_last_result(self) -> bool | None:
        """Fold or unfold the newest result long enough to fold; returns whether it is folded
        now, or None when there is none."""
        if self.last_result is None:
            return None
        return self.toggle_block(self.last_result)

    def toggle_thinking(self) -> bool:
        """``z``: fold or unfold every thinking block; returns whether thinking is folded now."""
        self.thinking_folded = not self.thinking_folded
        self._fold_all({BlockKind.THINKING}, self.thinking_folded)
        return self.thinking_folded

    def toggle_output(self) -> bool:
        """``Z``: fold or unfold every tool output; returns whether output is folded now."""
        self.output_folded = not self.output_folded
        self._fold_all({BlockKind.TOOL_OUTPUT, BlockKind.ERROR}, self.output_folded)
        return self.output_folded

    def _fold_all(self, kinds: set[BlockKind], folded: bool) -> None:
        for index, block in enumerate(self.blocks):
            if block.kind in kinds and block.foldable:
                self._folded[index] = folded
        for layout in self._layouts.values():
            layout.invalidate(0)

    def block_of_line(self, line: int) -> int:
        return self._line_block[line]

    def search(self, query: str) -> list[Match]:
        """Every line holding ``query``, case-insensitively, folded or not, in order."""
        needle = query.casefold()
        if not needle:
            return []
        blocks = self._line_block
        return [
            Match(index, blocks[index])
            for index, line in enumerate(self._lowered)
            if needle in line
        ]

    def reveal(self, line: int) -> None:
        """Unfold the block holding ``line`` when the line is inside its folded body."""
        index = self._line_block[line]
        if self._in_folded_body(index, line):
            # A preview line is cut to one row, so a match in it unfolds the block too.
            self.set_folded(index, False)

    def block_text(self, block: int) -> str:
        """A block as logical text: its lines without wrap breaks, its folded body left out."""
        entry = self.blocks[block]
        end = entry.start + entry.kept if self._folded[block] else entry.end
        return "\n".join(self.lines[entry.start : end])

    def text(self) -> str:
        """The whole transcript as logical text; fully folded blocks leave nothing behind."""
        parts = [self.block_text(index) for index in range(len(self.blocks))]
        return "\n".join(part for part in parts if part)

    def prompt_blocks(self) -> list[int]:
        return [index for index, block in enumerate(self.blocks) if block.kind is BlockKind.PROMPT]

    def _layout(self, width: int) -> _Layout:
        layout = self._layouts.get(width)
        if layout is None:
            layout = _Layout(width)
            # Only the widths in use matter; an old width is unlikely to come back soon.
            if len(self._layouts) >= 4:
                self._layouts.pop(next(iter(self._layouts)))
            self._layouts[width] = layout
        self._bring_up_to_date(layout)
        return layout

    def _bring_up_to_date(self, layout: _Layout) -> None:
        count = len(self.blocks)
        if layout.valid >= count and len(layout.rows) == count:
            return
        del layout.rows[layout.valid :]
        del layout.starts[layout.valid :]
        total = layout.starts[-1] + layout.rows[-1] if layout.rows else 0
        for index in range(layout.valid, count):
            rows = self._block_row_count(index, layout)
            layout.starts.append(total)
            layout.rows.append(rows)
            total += rows
        layout.valid = count

    def _spacer(self, index: int) -> int:
        """A blank row before a prompt or narration, so prose stands apart from tool groups;
        none between a marker line and the prose it introduces."""
        if index == 0:
            return 0
        kind = self.blocks[index].kind
        if kind is BlockKind.NARRATION and self.blocks[index - 1].kind is BlockKind.META:
            return 0
        return 1 if kind in (BlockKind.PROMPT, BlockKind.NARRATION) else 0

    def _wrapped(self, line: int, layout: _Layout) -> list[str]:
        cached = layout.line_rows.get(line)
        if cached is None:
            cached = wrap_line(self.lines[line], layout.width)
            if len(cached) > 1:
                layout.line_rows[line] = cached
        return cached

    def _line_row_count(self, line: int, layout: _Layout) -> int:
        text = self.lines[line]
        if len(text) <= layout.width and text.isascii():
            return 1
        return len(self._wrapped(line, layout))

    def _in_folded_body(self, index: int, line: int) -> bool:
        """Whether ``line`` is past the header of a folded block: a preview line is then drawn
        cut to one row, and the rest is not drawn at all."""
        block = self.blocks[index]
        return self._folded[index] and line >= block.start + block.header

    def _shown_row_count(self, index: int, line: int, layout: _Layout) -> int:
        return 1 if self._in_folded_body(index, line) else self._line_row_count(line, layout)

    def _shown_rows(self, index: int, line: int, layout: _Layout) -> list[str]:
        if self._in_folded_body(index, line):
            return [clip_line(self.lines[line], layout.width)]
        return self._wrapped(line, layout)

    def _markdown_rows(self, index: int, layout: _Layout) -> list[Row]:
        """A markdown block's rows at the layout's width: parsed once, wrapped once per width."""
        cached = layout.markdown_rows.get(index)
        if cached is not None:
            return cached
        block = self.blocks[index]
        parsed = self._markdown.get(index)
        if parsed is None:
            parsed = markdown_lines("\n".join(self.lines[block.start : block.end]))
            self._markdown[index] = parsed
        rows: list[Row] = []
        for entry in parsed:
            line = min(block.start + entry.line, block.end - 1)
            rows.extend(_markdown_line_rows(entry, layout.width, index, line))
        if not rows:
            rows.append(Row("", RowKind.NARRATION, index, block.start))
        layout.markdown_rows[index] = rows
        return rows

    def _block_row_count(self, index: int, layout: _Layout) -> int:
        block = self.blocks[index]
        rows = self._spacer(index)
        if block.markdown:
            return rows + len(self._markdown_rows(index, layout))
        if self._folded[index]:
            shown_end = block.start + block.kept
            rows += 1
        else:
            shown_end = block.end
        for line in range(block.start, shown_end):
            rows += self._shown_row_count(index, line, layout)
        return rows

    def row_count(self, width: int) -> int:
        layout = self._layout(width)
        if not layout.rows:
            return 0
        return layout.starts[-1] + layout.rows[-1]

    def block_at_row(self, row: int, width: int) -> int:
        layout = self._layout(width)
        return max(0, bisect_right(layout.starts, row) - 1)

    def block_first_row(self, block: int, width: int) -> int:
        """The first row of a block's own text, after any spacer."""
        return self._layout(width).starts[block] + self._spacer(block)

    def block_last_row(self, block: int, width: int) -> int:
        layout = self._layout(width)
        return layout.starts[block] + layout.rows[block] - 1

    def line_row(self, line: int, width: int) -> int:
        """The first row a logical line takes, or its block's placeholder when it is folded."""
        layout = self._layout(width)
        index = self._line_block[line]
        block = self.blocks[index]
        row = layout.starts[index] + self._spacer(index)
        if block.markdown:
            drawn = self._markdown_rows(index, layout)
            later = (offset for offset, entry in enumerate(drawn) if entry.line >= line)
            return row + next(later, len(drawn) - 1)
        shown_end = block.start + block.kept if self._folded[index] else block.end
        for earlier in range(block.start, min(line, shown_end)):
            row += self._shown_row_count(index, earlier, layout)
        return row

    def rows(self, start: int, count: int, width: int) -> list[Row]:
        """The rows ``[start, start + count)`` at ``width``; fewer at the end of the transcript."""
        layout = self._layout(width)
        result: list[Row] = []
        if not layout.rows or count <= 0:
            return result
        index = max(0, bisect_right(layout.starts, start) - 1)
        skip = start - layout.starts[index]
        while index < len(self.blocks) and len(result) < count:
            result.extend(self._block_rows(index, layout, skip, count - len(result)))
            skip = 0
            index += 1
        return result

    def _block_rows(self, index: int, layout: _Layout, skip: int, limit: int) -> list[Row]:
        """Up to ``limit`` rows of one block, leaving out its first ``skip`` rows; the skipped
        lines are counted, not wrapped, so a long expanded output stays cheap to page through."""
        block = self.blocks[index]
        rows: list[Row] = []
        if self._spacer(index):
            if skip:
                skip -= 1
            else:
                rows.append(Row("", RowKind.BLANK, index, block.start))
        if block.markdown:
            drawn = self._markdown_rows(index, layout)
            rows.extend(drawn[skip : skip + limit - len(rows)])
            return rows[:limit]
        kind = RowKind(block.kind.value)
        # A failed command's header stays an error's colour; an ordinary one is quieter.
        ok_output = block.kind is BlockKind.TOOL_OUTPUT
        folded = self._folded[index]
        shown_end = block.start + block.kept if folded else block.end
        line = block.start
        while line < shown_end and skip:
            taken = self._shown_row_count(index, line, layout)
            if taken > skip:
                break
            skip -= taken
            line += 1
        header_end = block.start + block.header
        while line < shown_end and len(rows) < limit:
            wrapped = self._shown_rows(index, line, layout)
            row_kind = RowKind.RESULT_HEADER if line < header_end and ok_output else kind
            for text in wrapped[skip:]:
                rows.append(Row(text, row_kind, index, line))
            skip = 0
            line += 1
        if folded and len(rows) < limit and not skip:
            text = placeholder_text(block, last_result=index == self.last_result)
            rows.append(Row(text, RowKind.PLACEHOLDER, index, shown_end))
        return rows[:limit]


def _markdown_line_rows(entry: MarkdownLine, width: int, block: int, line: int) -> list[Row]:
    """One parsed markdown line wrapped to ``width``: the prefix leads the first row, the
    hanging indent the others."""
    prefix_width = line_width(entry.prefix)
    room = max(width - prefix_width, 1)
    if entry.table is not None:
        laid_out = table_rows(entry.table, max(width - line_width(entry.hanging), 1))
        return [
            _markdown_row(
                (*(entry.prefix if number == 0 else entry.hanging), *spans), block, row_line
            )
            for number, (row_line, spans) in enumerate(laid_out)
        ]
    if entry.rule:
        return [_markdown_row((*entry.prefix, (RULE_CHARACTER * room, Emphasis.DIM)), block, line)]
    text = "".join(piece for piece, _ in entry.spans)
    return [
        _markdown_row(
            (
                *(entry.prefix if number == 0 else entry.hanging),
                *cut_spans(entry.spans, start, end),
            ),
            block,
            line,
        )
        for number, (start, end) in enumerate(wrap_offsets(text, room))
    ]


def _markdown_row(spans: tuple[Span, ...], block: int, line: int) -> Row:
    return Row("".join(piece for piece, _ in spans), RowKind.NARRATION, block, line, spans)


def table_rows(table: Table, width: int) -> list[tuple[int, tuple[Span, ...]]]:
    """A table laid out to fit ``width`` cells: each row as many screen rows as its tallest
    cell wraps to, the header row followed by a rule, each row with the source line it came
    from (the rule with the delimiter row's)."""
    columns = table.columns
    if not columns:
        return []
    separator = cell_width(CELL_SEPARATOR)
    cells = [
        [row.cells[column] if column < len(row.cells) else () for column in range(columns)]
        for row in table.rows
    ]
    natural = [max(line_width(row[column]) for row in cells) for column in range(columns)]
    longest_words = [
        max((_longest_word(row[column]) for row in cells), default=0) for column in range(columns)
    ]
    widths = fit_columns(natural, longest_words, width - separator * (columns - 1))
    alignments = [
        table.alignments[column] if column < len(table.alignments) else Alignment.LEFT
        for column in range(columns)
    ]
    laid_out: list[tuple[int, tuple[Span, ...]]] = []
    for row, row_cells in zip(table.rows, cells, strict=True):
        wrapped = [_cell_lines(cell, widths[column]) for column, cell in enumerate(row_cells)]
        for number in range(max(len(lines) for lines in wrapped)):
            spans: list[Span] = []
            for column, lines in enumerate(wrapped):
                if column:
                    spans.append((CELL_SEPARATOR, Emphasis.DIM))
                piece = lines[number] if number < len(lines) else []
                spans.extend(_aligned(piece, widths[column], alignments[column]))
            laid_out.append((row.line, tuple(spans)))
        if row.header:
            rule = HEADER_CROSSING.join(RULE_CHARACTER * size for size in widths)
            laid_out.append((row.line + 1, ((rule, Emphasis.DIM),)))
    return laid_out


def fit_columns(natural: list[int], longest_words: list[int], room: int) -> list[int]:
    """Column widths that add up to at most ``room`` when that can be done with a cell for
    each column. Columns that fit keep their own width; otherwise each keeps a floor (its
    longest word when the room allows, else ``MIN_COLUMN_WIDTH``, never more than its own
    width) and the room left is shared in proportion to what each needs beyond its floor."""
    if sum(natural) <= room:
        return list(natural)
    count = len(natural)
    fair_share = max(room // count, 1)
    floors = [
        min(size, max(MIN_COLUMN_WIDTH, min(word, fair_share)))
        for size, word in zip(natural, longest_words, strict=True)
    ]
    if sum(floors) > room:
        floors = [min(size, MIN_COLUMN_WIDTH) for size in natural]
    if sum(floors) > room:
        # Too narrow for even the floors: share the room evenly, a cell at the least.
        even, extra = divmod(max(room, count), count)
        return [max(even + (column < extra), 1) for column in range(count)]
    wants = [size - floor for size, floor in zip(natural, floors, strict=True)]
    spare = room - sum(floors)
    wanted = sum(wants)
    widths = [floor + spare * want // wanted for floor, want in zip(floors, wants, strict=True)]
    # Integer shares leave a few cells over; they go to the columns still short of their text.
    left = room - sum(widths)
    for column in sorted(
        range(count), key=lambda index: natural[index] - widths[index], reverse=True
    ):
        if not left:
            break
        if widths[column] < natural[column]:
            widths[column] += 1
            left -= 1
    return widths


def _longest_word(spans: tuple[Span, ...]) -> int:
    text = "".join(piece for piece, _ in spans)
    return max((cell_width(word) for word in text.split(" ")), default=0)


def _cell_lines(cell: tuple[Span, ...], width: int) -> list[list[Span]]:
    text = "".join(piece for piece, _ in cell)
    return [cut_spans(cell, start, end) for start, end in wrap_offsets(text, width)]


def _aligned(cell: list[Span], width: int, alignment: Alignment) -> list[Span]:
    room = width - line_width(tuple(cell))
    if alignment is Alignment.RIGHT:
        left = room
    elif alignment is Alignment.CENTER:
        left = room // 2
    else:
        left = 0
    padded = [(" " * left, Emphasis.NONE)] if left > 0 else []
    padded.extend(cell)
    if room - left > 0:
        padded.append((" " * (room - left), Emphasis.NONE))
    return padded


def transcript_of(
    conversation: Conversation, *, output_folded: bool = True, thinking_folded: bool = True
) -> Transcript:
    """A stored conversation folded as the run screen folds it, ending as its last turn
    ended."""
    from fisk_ai.agent.replay import conversation_events
    from fisk_ai.presentation import stored_ending_lines

    transcript = Transcript(output_folded=output_folded, thinking_folded=thinking_folded)
    transcript.add_events(conversation_events(conversation))
    for line in stored_ending_lines(conversation):
        transcript.add_meta(line)
    return transcript
