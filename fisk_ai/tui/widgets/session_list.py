"""The session browser's listing: a Line API list that draws only the rows on screen, so
thousands of sessions cost no more to show than a screenful."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from rich.segment import Segment
from textual.binding import Binding, BindingType
from textual.events import Key, Paste
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.sessions import SessionSummary

ID_WIDTH = 27
"""A KSUID's length: the ids a run makes line up; a longer one given by hand pushes its row on."""
STATUS_WIDTH = 10
UPDATED_FORMAT = "%Y-%m-%d %H:%M"
PROMPT_LIMIT = 200
ANSWERED = "answered"
"""Shown for a suspended session whose last turn was answered: it waits for a next prompt."""


def row_text(summary: SessionSummary) -> str:
    """A session's line as listed: its id, status, when it was last touched and its first
    prompt, or for a journal that cannot be read, why not."""
    if summary.problem:
        about = f"cannot be read: {single_line(summary.problem, PROMPT_LIMIT)}"
    else:
        about = single_line(summary.first_prompt, PROMPT_LIMIT)
    updated = summary.updated.astimezone().strftime(UPDATED_FORMAT)
    run_id = single_line(summary.run_id)
    status = ANSWERED if summary.between_turns else summary.status.value
    return f"{run_id:<{ID_WIDTH}}  {status:<{STATUS_WIDTH}}{updated}  {about}"


class SessionRow:
    """One listed session. Its line as shown and the lowercased text the filter reads are made
    when first asked for: a screen shows a few dozen of thousands of rows, and the filter reads
    the text only once something is typed."""

    __slots__ = ("__dict__", "summary")

    def __init__(self, summary: SessionSummary) -> None:
        self.summary = summary

    @cached_property
    def text(self) -> str:
        return row_text(self.summary)

    @cached_property
    def haystack(self) -> str:
        # The model has no column but is still matched.
        return f"{self.text} {single_line(self.summary.model)}".casefold()


def column_heading() -> str:
    return f"{'ID':<{ID_WIDTH}}  {'STATUS':<{STATUS_WIDTH}}{'UPDATED':<18}PROMPT"


class SessionList(ScrollView, can_focus=True):
    """The listing: one row per session, drawn only when on screen."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"session-list--cursor"}

    DEFAULT_CSS = """
    SessionList {
        background: $surface;
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
        """Replace the rows, keeping the highlighted session when it is still listed."""
        current = self.highlighted
        self.rows = rows
        self.cursor = 0
        if current is not None:
            for index, row in enumerate(rows):
                if row.summary.run_id == current.run_id:
                    self.cursor = index
                    break
        self.virtual_size = Size(self.size.width, len(rows))
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self.highlighted))

    @property
    def highlighted(self) -> SessionSummary | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor].summary
        return None

    def render_line(self, y: int) -> Strip:
        index = round(self.scroll_offset.y) + y
        width = self.size.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        style = self.rich_style
        if index == self.cursor:
            style += self.get_component_rich_style("session-list--cursor")
        # Prompts and models are untrusted text: a plain segment, never markup.
        strip = Strip([Segment(self.rows[index].text, style)])
        if strip.cell_length > width > 1:
            # A cut prompt says it was cut.
            cut = strip.crop(0, width - 1).extend_cell_length(width - 1, style)
            return Strip([*cut, Segment("\u2026", style)], width)
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
