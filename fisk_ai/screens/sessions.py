"""The session browser: every conversation of the configured backend, filtered as you type, with
a preview of the highlighted transcript; Enter opens it in the viewer, ``r`` resumes it in the
run screen, ``d`` removes it after a confirmation.

The listing is read by a worker, so the screen answers keys while thousands of journals are
summarised, and it is drawn by a Line API list that renders only the rows on screen. Filtering
works on a lowercased copy of each row kept in memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.segment import Segment
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.geometry import Size
from textual.message import Message
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Static

from fisk_ai.screens.question import ConfirmScreen
from fisk_ai.screens.transcript import TranscriptScreen
from fisk_ai.tools.questions import ConfirmQuestion
from fisk_ai.tui.transcript import Transcript, transcript_of
from fisk_ai.tui.widgets.transcript_view import TranscriptView
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.sessions import Conversation, SessionStore, SessionSummary

STATUS_WIDTH = 10
MODEL_WIDTH = 18
UPDATED_FORMAT = "%Y-%m-%d %H:%M"
PROMPT_LIMIT = 200
BROWSER_KEYS = (
    "type to filter  Enter open  r resume  d remove  Tab preview  Esc clear filter  q quit"
)
LOADING = "reading sessions..."


@dataclass(frozen=True)
class SessionRow:
    """One listed session with its line as shown and the lowercased text the filter reads."""

    summary: SessionSummary
    text: str
    haystack: str


def session_row(summary: SessionSummary) -> SessionRow:
    model = single_line(summary.model, MODEL_WIDTH - 1) or "-"
    prompt = single_line(summary.first_prompt, PROMPT_LIMIT)
    updated = summary.updated.astimezone().strftime(UPDATED_FORMAT)
    text = f"{summary.status.value:<{STATUS_WIDTH}}{model:<{MODEL_WIDTH + 3}}{updated}  {prompt}"
    haystack = f"{summary.run_id} {text}".casefold()
    return SessionRow(summary, text, haystack)


def column_heading() -> str:
    return f"{'STATUS':<{STATUS_WIDTH}}{'MODEL':<{MODEL_WIDTH + 3}}{'UPDATED':<18}PROMPT"


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
        """A printable key the list does not answer: the start of a filter."""

        def __init__(self, character: str) -> None:
            super().__init__()
            self.character = character

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[SessionRow] = []
        self.cursor = 0

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
        if event.is_printable and character and character not in self.OWN_KEYS:
            event.stop()
            event.prevent_default()
            self.post_message(self.Typed(character))


class FilterInput(Input):
    """The filter: every keystroke narrows the listing; Enter or Down goes back to the list and
    Esc empties the filter."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "empty", "Clear filter", show=False),
        Binding("down", "to_list", "List", show=False),
    ]

    def action_empty(self) -> None:
        self.value = ""
        self.action_to_list()

    def action_to_list(self) -> None:
        self.screen.query_one(SessionList).focus()


class SessionBrowser(Screen[None]):
    """The listing of ``store``. ``r`` leaves the app with the chosen session id as its result,
    for the command to resume it, unless ``resume_refused`` says why it cannot (then that is
    shown in the status line). ``closes_app`` makes q leave the app rather than go back to the
    screen beneath."""

    DEFAULT_CSS = """
    SessionBrowser { layout: vertical; }
    SessionBrowser #browser-header {
        height: 1; background: $primary; color: $text; padding: 0 1;
    }
    SessionBrowser #browser-body { height: 1fr; }
    SessionBrowser #browser-left { width: 3fr; }
    SessionBrowser #browser-heading { height: 1; color: $text-muted; text-style: bold; }
    SessionBrowser #browser-filter { height: 3; }
    SessionBrowser #browser-list { height: 1fr; }
    SessionBrowser #browser-preview { width: 2fr; border-left: solid $primary; }
    SessionBrowser #browser-status {
        height: 1; background: $primary-darken-2; color: $text; padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("escape", "back_to_list", "List", show=False),
        Binding("slash", "filter", "Filter", show=False),
    ]

    def __init__(
        self, store: SessionStore, *, closes_app: bool = True, resume_refused: str = ""
    ) -> None:
        super().__init__()
        self.store = store
        self.closes_app = closes_app
        self.resume_refused = resume_refused
        self.notice = ""
        """A one-off answer to a key, shown in the status line in place of the key list."""
        self.all_rows: list[SessionRow] = []
        self.loaded = False
        """Whether the listing has been read; the screen answers keys before that."""
        self.problem = ""

    def compose(self) -> ComposeResult:
        yield Static(
            f"fisk-ai sessions  {single_line(self.store.describe(), 80)}",
            markup=False,
            id="browser-header",
        )
        with Horizontal(id="browser-body"):
            with Vertical(id="browser-left"):
                yield FilterInput(
                    placeholder="filter sessions", select_on_focus=False, id="browser-filter"
                )
                yield Static(column_heading(), markup=False, id="browser-heading")
                yield SessionList(id="browser-list")
            yield TranscriptView(Transcript(), id="browser-preview")
        yield Static(LOADING, markup=False, id="browser-status")

    @property
    def session_list(self) -> SessionList:
        return self.query_one(SessionList)

    @property
    def filter_field(self) -> FilterInput:
        return self.query_one(FilterInput)

    @property
    def preview(self) -> TranscriptView:
        return self.query_one("#browser-preview", TranscriptView)

    def on_mount(self) -> None:
        self.session_list.focus()
        self.run_worker(self._read_listing(), group="listing", exclusive=True, exit_on_error=False)

    async def _read_listing(self) -> None:
        from fisk_ai.errors import FiskError

        try:
            summaries = await self.store.list()
        except FiskError as error:
            self.problem = single_line(str(error), 300)
            summaries = []
        except Exception as error:  # A backend failing must leave a readable screen behind.
            self.problem = single_line(f"{type(error).__name__}: {error}", 300)
            summaries = []
        self.all_rows = [session_row(summary) for summary in summaries]
        self.loaded = True
        self._apply_filter()

    def _apply_filter(self) -> None:
        needle = self.filter_field.value.casefold().strip()
        rows = self.all_rows
        if needle:
            rows = [row for row in rows if needle in row.haystack]
        self.session_list.show_rows(rows)
        self._show_status()

    def _show_status(self) -> None:
        status = self.query_one("#browser-status", Static)
        if self.problem:
            status.update(f"cannot list sessions: {self.problem}")
        elif not self.loaded:
            status.update(LOADING)
        else:
            shown = len(self.session_list.rows)
            told = self.notice or BROWSER_KEYS
            status.update(f"{shown} of {len(self.all_rows)} sessions   {told}")

    @on(Input.Changed, "#browser-filter")
    def filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.loaded:
            self._apply_filter()

    @on(Input.Submitted, "#browser-filter")
    def filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.session_list.focus()

    def on_session_list_typed(self, message: SessionList.Typed) -> None:
        field = self.filter_field
        field.focus()
        field.insert_text_at_cursor(message.character)

    def on_session_list_highlighted(self, message: SessionList.Highlighted) -> None:
        if self.notice:
            self.notice = ""
            self._show_status()
        summary = message.summary
        if summary is None:
            self.preview.show(Transcript())
            return
        self.run_worker(
            self._preview(summary.run_id), group="preview", exclusive=True, exit_on_error=False
        )

    async def _read(self, run_id: str) -> Conversation:
        from fisk_ai.sessions import fold

        return fold(await self.store.read(run_id))

    async def _preview(self, run_id: str) -> None:
        from fisk_ai.errors import FiskError

        try:
            conversation = await self._read(run_id)
        except FiskError as error:
            transcript = Transcript()
            transcript.add_meta(f"cannot read session {run_id}: {single_line(str(error), 300)}")
            self.preview.show(transcript)
            return
        self.preview.show(transcript_of(conversation))

    def on_session_list_chosen(self, message: SessionList.Chosen) -> None:
        self.run_worker(
            self._open(message.summary.run_id), group="open", exclusive=True, exit_on_error=False
        )

    async def _open(self, run_id: str) -> None:
        from fisk_ai.errors import FiskError

        try:
            conversation = await self._read(run_id)
        except FiskError as error:
            self.notify(single_line(str(error), 300), severity="error", markup=False)
            return
        self.app.push_screen(TranscriptScreen(conversation))

    def on_session_list_resume_asked(self, message: SessionList.ResumeAsked) -> None:
        from fisk_ai.sessions import SessionStatus

        summary = message.summary
        if self.resume_refused:
            self.notice = self.resume_refused
        elif summary.status in (SessionStatus.COMPLETED, SessionStatus.CORRUPT):
            self.notice = f"session {summary.run_id} is {summary.status.value} and cannot resume"
        else:
            self.app.exit(summary.run_id)
            return
        self._show_status()

    def on_session_list_remove_asked(self, message: SessionList.RemoveAsked) -> None:
        run_id = message.summary.run_id
        question = ConfirmQuestion(f"Remove session {run_id}? Its journal is deleted.")

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self.run_worker(self._remove(run_id), group="remove", exit_on_error=False)

        self.app.push_screen(ConfirmScreen(question), answered)

    async def _remove(self, run_id: str) -> None:
        from fisk_ai.errors import FiskError

        try:
            await self.store.remove(run_id)
        except FiskError as error:
            self.notify(single_line(str(error), 300), severity="error", markup=False)
            return
        self.all_rows = [row for row in self.all_rows if row.summary.run_id != run_id]
        self._apply_filter()
        self.notify(f"removed session {run_id}", timeout=2, markup=False)

    def action_filter(self) -> None:
        self.filter_field.focus()

    def action_back_to_list(self) -> None:
        self.session_list.focus()

    def action_quit(self) -> None:
        if self.closes_app:
            self.app.exit()
        else:
            self.dismiss(None)
