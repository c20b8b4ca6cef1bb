"""The session browser's listing: a Line API list that draws only the rows on screen, so
thousands of sessions cost no more to show than a screenful. Its columns are fitted to its
width: the first prompt leads, then how the session stands and when it was last touched; the id
and the model follow when there is room for them beside a readable prompt."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual.binding import Binding, BindingType
from textual.events import Key, Paste, Resize
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from fisk_ai.presentation import (
    RELATIVE_TIME_WIDTH,
    STATE_WIDTH,
    relative_time,
    session_state,
)
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.sessions import SessionSummary

PROMPT_LIMIT = 200
GAP = "  "
ELLIPSIS = "\u2026"
UPDATED_FORMAT = "%Y-%m-%d %H:%M"


@dataclass(frozen=True)
class Column:
    heading: str
    width: int


PROMPT = Column("PROMPT", 0)
STATE = Column("STATUS", STATE_WIDTH)
UPDATED = Column("UPDATED", RELATIVE_TIME_WIDTH)
ID = Column("ID", 27)
"""A KSUID's length: the ids a run makes line up; a longer one is cut with an ellipsis."""
MODEL = Column("MODEL", 24)
ALWAYS_SHOWN = (STATE, UPDATED)
SHOWN_WITH_ROOM = (ID, MODEL)
"""Added in this order while the prompt keeps ``PROMPT_ROOM`` cells beside them."""
PROMPT_ROOM = 30


@dataclass(frozen=True)
class Columns:
    """The columns a list of one width shows: the prompt, ``prompt_width`` cells wide, then
    ``after`` in order."""

    prompt_width: int
    after: tuple[Column, ...]

    @property
    def heading(self) -> str:
        return self.line(PROMPT.heading, {column: column.heading for column in self.after})

    def line(self, about: str, cells: dict[Column, str]) -> str:
        parts = [fit(about, self.prompt_width)]
        parts += [fit(cells[column], column.width) for column in self.after]
        return GAP.join(parts)


def columns_for(width: int) -> Columns:
    """The columns a list ``width`` cells wide shows: every column fitted to its width."""
    after = list(ALWAYS_SHOWN)

    def prompt_width() -> int:
        return width - sum(len(GAP) + column.width for column in after)

    for column in SHOWN_WITH_ROOM:
        if prompt_width() - len(GAP) - column.width < PROMPT_ROOM:
            break
        after.append(column)
    return Columns(max(prompt_width(), 1), tuple(after))


def fit(text: str, width: int) -> str:
    """``text`` in exactly ``width`` cells: padded, or cut with an ellipsis saying it was."""
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(text, width - 1) + ELLIPSIS


class SessionRow:
    """One listed session. Its cells as shown and the lowercased text the filter reads are made
    when first asked for: a screen shows a few dozen of thousands of rows, and the filter reads
    the text only once something is typed. ``now`` is when the listing was read, which the
    relative time of the last touch counts from."""

    __slots__ = ("__dict__", "now", "summary")

    def __init__(self, summary: SessionSummary, now: datetime) -> None:
        self.summary = summary
        self.now = now

    @cached_property
    def about(self) -> str:
        """The first prompt, or for a journal that cannot be read, why not."""
        if self.summary.problem:
            return f"cannot be read: {single_line(self.summary.problem, PROMPT_LIMIT)}"
        return single_line(self.summary.first_prompt, PROMPT_LIMIT)

    @cached_property
    def cells(self) -> dict[Column, str]:
        summary = self.summary
        return {
            STATE: session_state(summary).value,
            UPDATED: relative_time(summary.updated, self.now),
            ID: single_line(summary.run_id),
            MODEL: single_line(summary.model),
        }

    def line(self, columns: Columns) -> str:
        return columns.line(self.about, self.cells)

    @cached_property
    def haystack(self) -> str:
        # Every column is matched, shown or not, with the journal's own reason and the date.
        summary = self.summary
        updated = summary.updated.astimezone().strftime(UPDATED_FORMAT)
        matched = (self.about, *self.cells.values(), summary.status.value, updated)
        return " ".join(matched).casefold()


class SessionList(ScrollView, can_focus=True):
    """The listing: one row per session, drawn only when on screen."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"session-list--cursor"}

    DEFAULT_CSS = """
    SessionList {
        background: $surface;
        /* A fixed gutter: the columns do not move when the list grows a scrollbar. */
        scrollbar-gutter: stable;
        & > .session-list--cursor { background: $accent 50%; text-style: bold; }
    }
    SessionList:focus > .session-list--cursor { background: $accent; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last", show=False),
        Binding("enter", "open", "Open"),
        Binding("d", "remove", "Remove"),
        Binding("r", "resume", "Resume"),
    ]

    # Keys the list itself answers; any other printable key starts the filter.
    OWN_KEYS: ClassVar[frozenset[str]] = frozenset("kjgGdrq/")

    columns: var[Columns] = var(columns_for(0), init=False)
    """The columns fitted to the list's width; a heading above the list follows them."""

    class Highlighted(Message):
        def __init__(self, summary: SessionSummary | None) -> None:
            super().__init__()
            self.summary = summary

    class Chosen(Message):
        def __init__(self, summary: SessionSummary) -> None:
            super().__init__()
            self.summary = summary

    class RemoveAsked(Message):
        def __init__(self, summary: SessionSummary) -> None:
            super().__init__()
            self.summary = summary

    class ResumeAsked(Message):
        def __init__(self, summary: SessionSummary) -> None:
            super().__init__()
            self.summary = summary

    class Typed(Message):
        """Text for the filter: a printable key the list does not answer, what followed it,
        or a paste."""

        def __init__(self, character: str) -> None:
            super().__init__()
            self.character = character

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[SessionRow] = []
        self.cursor = 0
        self.typing = False
        """A key started the filter and the filter has not had the focus back since."""

    def show_rows(self, rows: list[SessionRow]) -> None:
        """Replace the rows, keeping the highlighted session when it is still listed, else
        highlighting the first."""
        current = self.highlighted
        self.rows = rows
        self.cursor = 0
        if current is not None:
            for index, row in enumerate(rows):
                if row.summary.run_id == current.run_id:
                    self.cursor = index
                    break
        self._rows_changed()

    def drop(self, run_id: str) -> None:
        """Take a removed session off the list; the highlight stays where it was, on the row
        that took the removed one's place (the one above when it was the last)."""
        self.rows = [row for row in self.rows if row.summary.run_id != run_id]
        self.cursor = max(0, min(self.cursor, len(self.rows) - 1))
        self._rows_changed()

    def _rows_changed(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self.highlighted))

    @property
    def highlighted(self) -> SessionSummary | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor].summary
        return None

    def on_resize(self, event: Resize) -> None:
        self.columns = columns_for(self.size.width)

    def watch_columns(self) -> None:
        self.refresh()

    def render_line(self, y: int) -> Strip:
        index = round(self.scroll_offset.y) + y
        width = self.size.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        style = self.rich_style
        if index == self.cursor:
            style += self.get_component_rich_style("session-list--cursor")
        # Prompts and models are untrusted text: a plain segment, never markup.
        strip = Strip([Segment(self.rows[index].line(self.columns), style)])
        return strip.extend_cell_length(width, style).crop(0, width)

    def _set_cursor(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(len(self.rows) - 1, index))
        if index == self.cursor:
            return
        self.cursor = index
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self.highlighted))

    def _scroll_to_cursor(self) -> None:
        height = max(self.size.height, 1)
        top = round(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def action_move(self, step: int) -> None:
        self._set_cursor(self.cursor + step)

    def action_page(self, step: int) -> None:
        self._set_cursor(self.cursor + step * max(self.size.height - 1, 1))

    def action_first(self) -> None:
        self._set_cursor(0)

    def action_last(self) -> None:
        self._set_cursor(len(self.rows) - 1)

    def action_open(self) -> None:
        summary = self.highlighted
        if summary is not None:
            self.post_message(self.Chosen(summary))

    def action_remove(self) -> None:
        summary = self.highlighted
        if summary is not None:
            self.post_message(self.RemoveAsked(summary))

    def action_resume(self) -> None:
        summary = self.highlighted
        if summary is not None:
            self.post_message(self.ResumeAsked(summary))

    def on_key(self, event: Key) -> None:
        character = event.character
        if not (event.is_printable and character):
            return
        # Once a key has started the filter, the rest of a burst (fast typing, a paste the
        # terminal sends as keys) is text for it too, even the keys the list answers: they
        # arrive before the filter has taken the focus.
        if self.typing or character not in self.OWN_KEYS:
            self.typing = True
            event.stop()
            event.prevent_default()
            self.post_message(self.Typed(character))

    def on_paste(self, event: Paste) -> None:
        event.stop()
        if event.text:
            self.typing = True
            self.post_message(self.Typed(single_line(event.text, PROMPT_LIMIT)))

    def on_focus(self) -> None:
        self.typing = False
