"""The transcript viewport: a Line API widget that draws only the rows on screen."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from fisk_ai.agent.events import DeltaEvent, Event, TextDeltaEvent, ThinkingDeltaEvent
from fisk_ai.tui.markdown import SYNTAX, Emphasis
from fisk_ai.tui.transcript import Match, Row, RowKind, Transcript
from fisk_ai.util.fsx import make_private_directories

COPY_FILE_NAME = "transcript-copy.txt"

SYNTAX_CLASSES = {
    Emphasis.KEYWORD: "transcript--code-keyword",
    Emphasis.STRING: "transcript--code-string",
    Emphasis.NUMBER: "transcript--code-number",
    Emphasis.COMMENT: "transcript--code-comment",
    Emphasis.DEFINITION: "transcript--code-definition",
    Emphasis.BUILTIN: "transcript--code-builtin",
}
"""The component class that colors each kind of token in a highlighted code block."""

_UNMARKED_KINDS = (RowKind.BLANK, RowKind.PLACEHOLDER)
"""Rows a search never marks: they draw no text of the line they stand for."""

STREAM_FRAME_SECONDS = 1 / 20
"""The answer being written is drawn at most this often: it reads as it comes, and a model
writing faster than a terminal redraws costs one frame per interval, not one per piece."""

Hit = tuple[int, int]
"""Where a search hit is in a row's text: the ``[start, end)`` character range."""


def _joined(
    pieces: list[DeltaEvent],
) -> list[tuple[type[TextDeltaEvent] | type[ThinkingDeltaEvent], str]]:
    joined: list[tuple[type[TextDeltaEvent] | type[ThinkingDeltaEvent], str]] = []
    for piece in pieces:
        kind = type(piece)
        if joined and joined[-1][0] is kind:
            joined[-1] = (kind, joined[-1][1] + piece.text)
        else:
            joined.append((kind, piece.text))
    return joined


def default_copy_directory() -> Path:
    """Where a copy is also written, for terminals that ignore OSC 52."""
    state_home = os.environ.get("XDG_STATE_HOME", "")
    base = Path(state_home) if state_home and Path(state_home).is_absolute() else None
    return (base or Path.home() / ".local" / "state") / "fisk-ai"


class TranscriptView(ScrollView, can_focus=True):
    """Shows a :class:`Transcript`; appending, folding and searching change the model and
    refresh only what moved."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "transcript--prompt",
        "transcript--narration",
        "transcript--thinking",
        "transcript--call",
        "transcript--output",
        "transcript--error",
        "transcript--meta",
        "transcript--warning",
        "transcript--placeholder",
        "transcript--result-header",
        "transcript--question",
        "transcript--answer",
        "transcript--blank",
        "transcript--focused",
        "transcript--match",
        "transcript--match-current",
        "transcript--code",
        *SYNTAX_CLASSES.values(),
    }

    DEFAULT_CSS = """
    TranscriptView {
        background: $surface;
        scrollbar-gutter: stable;
        & > .transcript--prompt { text-style: bold; }
        & > .transcript--narration { }
        & > .transcript--thinking { color: $text-muted; text-style: dim; }
        & > .transcript--call { color: $text-primary; text-style: bold; }
        & > .transcript--output { }
        & > .transcript--error { color: $text-error; }
        & > .transcript--meta { color: $text-muted; }
        & > .transcript--warning { color: $text-warning; }
        & > .transcript--placeholder { color: $text-muted; text-style: italic; }
        & > .transcript--result-header { color: $text-muted; }
        & > .transcript--question { color: $text-accent; text-style: bold; }
        & > .transcript--answer { color: $text-success; }
        & > .transcript--blank { }
        & > .transcript--focused { background: $accent 30%; }
        & > .transcript--match { background: $warning 60%; text-style: underline; }
        & > .transcript--match-current {
            background: $warning;
            color: $background;
            text-style: bold;
        }
        & > .transcript--code { color: $text-accent; }
        & > .transcript--code-keyword { color: $text-primary; text-style: bold; }
        & > .transcript--code-string { color: $text-success; }
        & > .transcript--code-number { color: $text-warning; }
        & > .transcript--code-comment { color: $text-muted; text-style: italic; }
        & > .transcript--code-definition { color: $text-secondary; text-style: bold; }
        & > .transcript--code-builtin { color: $text-secondary; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g,home", "top", "Top", show=False),
        Binding("G,end", "bottom", "Bottom", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("up", "focus_previous_block", "Previous block", show=False),
        Binding("down", "focus_next_block", "Next block", show=False),
        Binding("left_square_bracket", "previous_prompt", "Previous prompt", show=False),
        Binding("right_square_bracket", "next_prompt", "Next prompt", show=False),
        Binding("z", "toggle_thinking", "Show or hide thinking"),
        Binding("Z", "toggle_output", "Fold output"),
        Binding("ctrl+o", "toggle_last_output", "Expand the last result", show=False),
        Binding("enter,space", "toggle_block", "Fold block", show=False),
        Binding("slash", "search", "Search"),
        Binding("n", "next_match", "Next match", show=False),
        Binding("N", "previous_match", "Previous match", show=False),
        Binding("y", "copy_all", "Copy transcript", show=False),
        Binding("c", "copy_block", "Copy block", show=False),
    ]

    unseen: var[bool] = var(False, init=False)
    """Rows arrived below the screen while the operator was scrolled up."""

    class SearchRequested(Message):
        """The operator pressed ``/``; the screen asks for the text and calls ``search``."""

    class MatchShown(Message):
        """``n`` or ``N`` moved to another match; ``position`` reads ``3 of 12``."""

        def __init__(self, position: str) -> None:
            super().__init__()
            self.position = position

    def __init__(
        self,
        transcript: Transcript | None = None,
        *,
        copy_directory: Path | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.transcript = transcript if transcript is not None else Transcript()
        self.copy_directory = copy_directory
        self.following = True
        """Whether new rows scroll into view; off once the operator scrolls up."""
        self.focused_block: int | None = None
        self.matches: list[Match] = []
        self.match_index = -1
        self.search_text = ""
        self._match_lines: set[int] = set()
        self._pattern: re.Pattern[str] | None = None
        self._width = 0
        self._window: tuple[int, int, int, list[Row]] | None = None
        self._hits: list[list[Hit]] | None = None
        """Where the search text is in each row of the window, worked out once per window."""
        self._current_line_hit = False
        """Whether the current match's words were found on any row of the window."""
        self._pieces: list[DeltaEvent] = []
        """Pieces of the answer being written that the next frame draws."""
        self._frame: Timer | None = None
        self._last_frame = 0.0

    @property
    def row_width(self) -> int:
        return max(self.scrollable_content_region.width, 1)

    def _sync_size(self) -> None:
        width = self.row_width
        self._width = width
        self._window = None
        self.virtual_size = Size(width, self.transcript.row_count(width))

    def on_mount(self) -> None:
        self._sync_size()

    def on_resize(self) -> None:
        # Keep the logical line at the top in place: its row moves when the width re-wraps.
        top_line = self._top_line() if self._width and not self.following else None
        self._sync_size()
        if self.following:
            self.scroll_end(animate=False, immediate=True)
        elif top_line is not None:
            row = self.transcript.line_row(top_line, self._width)
            self.scroll_to(y=row, animate=False, immediate=True)

    def append(self, events: Iterable[Event], *, seconds: int | None = None) -> None:
        """Add a batch of events; only the new blocks are measured. ``seconds`` is how long
        the tool call a result answers took, when the caller timed it."""
        self._take_pieces()
        self.transcript.add_events(events, seconds=seconds)
        self._changed()

    def add_delta(self, event: DeltaEvent) -> None:
        """Draw the next piece of the answer being written, in the next frame: the first piece
        after a quiet spell at once, then at most one frame per ``STREAM_FRAME_SECONDS``."""
        self._pieces.append(event)
        if self._frame is not None:
            return
        wait = self._last_frame + STREAM_FRAME_SECONDS - time.monotonic()
        if wait > 0:
            self._frame = self.set_timer(wait, self._draw_pieces)
        else:
            self._draw_pieces()

    def keep_streamed(self, note: str) -> None:
        """The answer being written stopped short: what was drawn of it stays, under
        ``note``."""
        self._take_pieces()
        if self.transcript.streaming:
            self.transcript.keep_streamed(note)
            self._changed()

    def _draw_pieces(self) -> None:
        self._frame = None
        if self._take_pieces():
            self._last_frame = time.monotonic()
            self._changed()

    def _take_pieces(self) -> bool:
        """Hand the waiting pieces to the transcript, those of one kind in a row joined into
        one; returns whether there were any."""
        if self._frame is not None:
            self._frame.stop()
            self._frame = None
        pieces, self._pieces = self._pieces, []
        for kind, text in _joined(pieces):
            self.transcript.add_delta(kind(text))
        return bool(pieces)

    def add_meta(self, text: str) -> None:
        """Add a marker line of the surface's own (``--- context cleared ---``)."""
        self.transcript.add_meta(text)
        self._changed()

    def clear(self) -> None:
        """Empty the view, keeping the folding settings; the conversation is not touched."""
        self._take_pieces()
        old = self.transcript
        self.transcript = Transcript(
            output_folded=old.output_folded, thinking_folded=old.thinking_folded
        )
        self.focused_block = None
        self._forget_matches()
        self.following = True
        self._changed()

    def show(self, transcript: Transcript) -> None:
        """Replace what the view shows with another transcript, from its top."""
        self._take_pieces()
        self.transcript = transcript
        self.focused_block = None
        self._forget_matches()
        self.search_text = ""
        self._sync_size()
        self.refresh()
        self.scroll_home(animate=False, immediate=True)
        self.following = round(self.scroll_offset.y) >= self.max_scroll_y

    def _changed(self) -> None:
        transcript = self.transcript
        # Drawn pieces give way to what replaces them: nothing may point past the end.
        if self.focused_block is not None and self.focused_block >= len(transcript):
            self.focused_block = None
        if self.matches and self.matches[-1].line >= transcript.line_count:
            self.matches = [found for found in self.matches if found.line < transcript.line_count]
            self.match_index = min(self.match_index, len(self.matches) - 1)
        self._sync_size()
        self.refresh()
        if self.following:
            # Forced: the scrollbar that allows scrolling appears only at the next layout.
            self.scroll_end(animate=False, immediate=True, force=True)
        else:
            self.unseen = True

    def follow_tail(self) -> None:
        """Go to the end and follow it again, as sending a prompt does."""
        self.following = True
        self.unseen = False
        self.scroll_end(animate=False, immediate=True, force=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Reaching the bottom by any means follows the tail again, like following a file.
        self.following = round(new_value) >= self.max_scroll_y
        if self.following:
            self.unseen = False

    def _visible_rows(self) -> list[Row]:
        if self.row_width != self._width:
            self._sync_size()
        top = round(self.scroll_offset.y)
        height = self.scrollable_content_region.height
        window = self._window
        if window is None or window[0] != top or window[1] != height or window[2] != self._width:
            rows = self.transcript.rows(top, height, self._width)
            window = (top, height, self._width, rows)
            self._window = window
            self._hits = None
        return window[3]

    def _window_hits(self, rows: list[Row]) -> list[list[Hit]]:
        """The search hits in each row on screen; a row of a line that did not match has
        none, and neither has a blank row or a fold line."""
        hits = self._hits
        if hits is None:
            pattern = self._pattern
            hits = []
            for row in rows:
                if (
                    pattern is None
                    or row.line not in self._match_lines
                    or row.kind in _UNMARKED_KINDS
                ):
                    hits.append([])
                else:
                    hits.append([found.span() for found in pattern.finditer(row.text)])
            current = self._current_match_line()
            self._current_line_hit = any(
                found and row.line == current for row, found in zip(rows, hits, strict=True)
            )
            self._hits = hits
        return hits

    def render_line(self, y: int) -> Strip:
        rows = self._visible_rows()
        width = self._width
        if y >= len(rows):
            return Strip.blank(width, self.rich_style)
        row = rows[y]
        style = self.rich_style + self.get_component_rich_style(f"transcript--{row.kind.value}")
        if row.block == self.focused_block and row.kind is not RowKind.BLANK:
            style += self.get_component_rich_style("transcript--focused")
        hits = self._window_hits(rows)[y] if self._match_lines else []
        current = row.line == self._current_match_line()
        if current and not self._current_line_hit and row.kind not in _UNMARKED_KINDS:
            # The match is in text the row does not show as written (a markdown marker, a
            # word cut by the wrap): the line is marked instead of its words.
            style += self.get_component_rich_style("transcript--match")
        # Untrusted text goes out as plain segments: it is never parsed as markup.
        if row.spans:
            segments = [
                Segment(text, style + self._emphasis_style(emphasis))
                for text, emphasis in row.spans
            ]
        else:
            segments = [Segment(row.text, style)]
        if hits:
            name = "transcript--match-current" if current else "transcript--match"
            segments = _marked(segments, hits, self.get_component_rich_style(name))
        return Strip(segments).extend_cell_length(width, self.rich_style).crop(0, width)

    def _emphasis_style(self, emphasis: Emphasis) -> Style:
        style = Style(
            bold=Emphasis.BOLD in emphasis or None,
            italic=Emphasis.ITALIC in emphasis or None,
            underline=Emphasis.UNDERLINE in emphasis or None,
            strike=Emphasis.STRIKE in emphasis or None,
            dim=Emphasis.DIM in emphasis or None,
        )
        if Emphasis.CODE in emphasis:
            style += self.get_component_rich_style("transcript--code")
        if emphasis & SYNTAX:
            for token, name in SYNTAX_CLASSES.items():
                if token in emphasis:
                    style += self.get_component_rich_style(name)
        return style

    def _current_match_line(self) -> int:
        """The logical line of the current match, or -1 when there is none."""
        if not (0 <= self.match_index < len(self.matches)):
            return -1
        return self.matches[self.match_index].line

    def action_top(self) -> None:
        self.scroll_home(animate=False, immediate=True)

    def action_bottom(self) -> None:
        self.scroll_end(animate=False, immediate=True)

    def action_page_up(self) -> None:
        self.scroll_page_up(animate=False)

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def show_block(self, block: int) -> None:
        """Focus a block and scroll it into view (the side panel's jump to a turn)."""
        self._show_block(block)

    def _show_block(self, block: int) -> None:
        self.focused_block = block
        row = self.transcript.block_first_row(block, self._width)
        height = self.scrollable_content_region.height
        if not (self.scroll_offset.y <= row < self.scroll_offset.y + height):
            self.scroll_to(y=row, animate=False, immediate=True, force=True)
        self.refresh()

    def _current_block(self) -> int:
        """The focused block while any of it is on screen, else the block at the top."""
        top = round(self.scroll_offset.y)
        if self.focused_block is not None:
            first = self.transcript.block_first_row(self.focused_block, self._width)
            last = self.transcript.block_last_row(self.focused_block, self._width)
            if first < top + self.scrollable_content_region.height and last >= top:
                return self.focused_block
        return self.transcript.block_at_row(top, self._width)

    def action_focus_previous_block(self) -> None:
        if len(self.transcript):
            self._show_block(max(0, self._current_block() - 1))

    def action_focus_next_block(self) -> None:
        if len(self.transcript):
            self._show_block(min(len(self.transcript) - 1, self._current_block() + 1))

    def action_previous_prompt(self) -> None:
        # Following the tail with nothing focused, the previous prompt is the last one.
        tail = self.focused_block is None and self.following
        current = len(self.transcript) if tail else self._current_block()
        earlier = [block for block in self.transcript.prompt_blocks() if block < current]
        if earlier:
            self._show_block(earlier[-1])

    def action_next_prompt(self) -> None:
        current = self._current_block()
        later = [block for block in self.transcript.prompt_blocks() if block > current]
        if later:
            self._show_block(later[0])

    def action_toggle_thinking(self) -> None:
        folded = self.transcript.toggle_thinking()
        self._changed_keeping_place()
        self.notify("thinking hidden" if folded else "thinking shown", timeout=2)

    def action_toggle_output(self) -> None:
        folded = self.transcript.toggle_output()
        self._changed_keeping_place()
        self.notify("output folded" if folded else "output expanded", timeout=2)

    def toggle_last_output(self) -> bool:
        """Expand or fold the newest tool result long enough to fold (Ctrl-O, from the chat
        bar too), keeping as much of it on screen as fits; returns whether there was one."""
        folded = self.transcript.toggle_last_result()
        block = self.transcript.last_result
        if folded is None or block is None:
            return False
        self._sync_size()
        self.refresh()
        if folded:
            if self.following:
                self.scroll_end(animate=False, immediate=True, force=True)
            return True
        first = self.transcript.block_first_row(block, self._width)
        last = self.transcript.block_last_row(block, self._width)
        top = round(self.scroll_offset.y)
        height = self.scrollable_content_region.height
        if not (top <= first and last < top + height):
            # The whole result when it fits, ending at the bottom; else from its header.
            self.scroll_to(
                y=min(first, last - height + 1), animate=False, immediate=True, force=True
            )
        return True

    def action_toggle_last_output(self) -> None:
        self.toggle_last_output()

    def action_toggle_block(self) -> None:
        if not len(self.transcript):
            return
        self.focused_block = self._current_block()
        self.transcript.toggle_block(self.focused_block)
        self._changed_keeping_place()

    def _changed_keeping_place(self) -> None:
        # Forced scrolls below: a view that grew past its height has no scrollbar until the
        # next layout.
        anchor = self.focused_block
        self._sync_size()
        self.refresh()
        if anchor is not None:
            self._show_block(anchor)
        elif self.following:
            self.scroll_end(animate=False, immediate=True, force=True)

    def action_search(self) -> None:
        self.post_message(self.SearchRequested())

    def search(self, query: str) -> int:
        """Find ``query`` case-insensitively, show the first match at or after the view, and
        return the number of matching lines; an empty query repeats the last search."""
        if query:
            self.search_text = query
        self._forget_matches()
        self.matches = self.transcript.search(self.search_text)
        if not self.matches:
            self.refresh()
            return 0
        self._match_lines = {match.line for match in self.matches}
        self._pattern = re.compile(re.escape(self.search_text), re.IGNORECASE)
        top_line = self._top_line()
        following = [i for i, match in enumerate(self.matches) if match.line >= top_line]
        self._go_to_match(following[0] if following else 0)
        return len(self.matches)

    def clear_search(self) -> None:
        """Take the search's marks off the rows; ``n`` has nothing to move to until the next
        search."""
        self._forget_matches()
        self.refresh()

    def _forget_matches(self) -> None:
        self.matches = []
        self.match_index = -1
        self._match_lines = set()
        self._pattern = None
        self._hits = None

    def _top_line(self) -> int:
        rows = self.transcript.rows(round(self.scroll_offset.y), 1, self._width)
        return rows[0].line if rows else 0

    def action_next_match(self) -> None:
        if self.matches:
            self._go_to_match((self.match_index + 1) % len(self.matches))
            self.post_message(self.MatchShown(self.match_position))

    def action_previous_match(self) -> None:
        if self.matches:
            self._go_to_match((self.match_index - 1) % len(self.matches))
            self.post_message(self.MatchShown(self.match_position))

    def _go_to_match(self, index: int) -> None:
        self.match_index = index
        self._hits = None
        match = self.matches[index]
        self.transcript.reveal(match.line)
        self._sync_size()
        self.focused_block = match.block
        row = self.transcript.line_row(match.line, self._width)
        height = self.scrollable_content_region.height
        if not (self.scroll_offset.y <= row < self.scroll_offset.y + height):
            self.scroll_to(y=max(0, row - height // 2), animate=False, immediate=True, force=True)
        self.refresh()

    @property
    def match_label(self) -> str:
        """``3/12`` for the current match, or an empty string when nothing matched."""
        if not self.matches:
            return ""
        return f"{self.match_index + 1}/{len(self.matches)}"

    @property
    def match_position(self) -> str:
        """``3 of 12`` for the current match, or an empty string when nothing matched."""
        if not self.matches:
            return ""
        return f"{self.match_index + 1} of {len(self.matches)}"

    def copy_block(self) -> str:
        """Copy the focused block as logical text and return it."""
        block = self._current_block() if len(self.transcript) else None
        text = "" if block is None else self.transcript.block_text(block)
        return self._copy(text)

    def copy_all(self) -> str:
        """Copy the whole transcript as logical text, folded content left out, and return it."""
        return self._copy(self.transcript.text())

    def action_copy_block(self) -> None:
        self.copy_block()

    def action_copy_all(self) -> None:
        self.copy_all()

    def _copy(self, text: str) -> str:
        self.app.copy_to_clipboard(text)
        self._write_copy_file(text)
        count = text.count("\n") + 1 if text else 0
        self.notify(f"sent {count} lines to clipboard", timeout=2)
        return text

    def _write_copy_file(self, text: str) -> None:
        directory = self.copy_directory or default_copy_directory()
        path = directory / COPY_FILE_NAME
        try:
            make_private_directories(directory)
            # Unlink first and create exclusively, so a planted symlink is dropped, not followed.
            path.unlink(missing_ok=True)
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError:
            # The clipboard already has it; the file is only a fallback.
            return


def _marked(segments: list[Segment], hits: list[Hit], mark: Style) -> list[Segment]:
    """``segments`` with the character ranges ``hits`` (in order, apart) drawn in ``mark``
    on top of their own style."""
    marked: list[Segment] = []
    position = 0
    hit_index = 0
    for segment in segments:
        text, style = segment.text, segment.style or Style()
        end = position + len(text)
        cut = 0
        while hit_index < len(hits) and cut < len(text):
            hit_start, hit_end = hits[hit_index]
            if hit_start >= end:
                break
            start_in, end_in = max(hit_start - position, cut), min(hit_end - position, len(text))
            if start_in > cut:
                marked.append(Segment(text[cut:start_in], style))
            marked.append(Segment(text[start_in:end_in], style + mark))
            cut = end_in
            if hit_end <= end:
                hit_index += 1
            else:
                break
        if cut < len(text):
            marked.append(Segment(text[cut:], style))
        position = end
    return marked
