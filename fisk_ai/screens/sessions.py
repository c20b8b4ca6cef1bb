"""The session browser: every conversation of the configured backend, filtered as you type, with
a preview of the highlighted transcript; Enter opens it in the viewer, ``r`` chooses it to
resume, ``d`` removes it after a confirmation.

The listing is read by a worker, so the screen answers keys while thousands of journals are
summarised, and it is drawn by a Line API list that renders only the rows on screen; a row's
line is formatted when it is first drawn. Filtering works on a lowercased copy of each row, made
at the first filter and kept in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Input, Static

from fisk_ai.presentation import SessionState, session_state
from fisk_ai.screens.question import ConfirmScreen
from fisk_ai.screens.transcript import TranscriptScreen
from fisk_ai.tools.questions import ConfirmQuestion
from fisk_ai.tui.transcript import Transcript, plural, transcript_of
from fisk_ai.tui.widgets.filter_input import FilterInput
from fisk_ai.tui.widgets.session_list import Columns, SessionList, SessionRow
from fisk_ai.tui.widgets.transcript_view import TranscriptView
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.sessions import Conversation, SessionStore

BROWSER_KEYS = (
    "type to filter  Enter open  r resume  d remove  Tab preview  Esc clear filter  q quit"
)
NARROW_BROWSER_KEYS = "Enter open  r resume  d remove  / filter  q quit"
"""The keys that fit beside the count on an 80-column terminal; the docs list them all."""
LOADING = "reading sessions..."
NOTHING_HIGHLIGHTED = "no session"
NARROW_BELOW = 100
"""Columns under which the preview is shown below the list rather than beside it."""


def current_time() -> datetime:
    return datetime.now(UTC)


class SessionBrowser(Screen[str]):
    """The listing of ``store``. ``r`` on a session that can resume dismisses the browser with
    that session's id and q dismisses it with None; whoever opened it decides what a chosen
    session means. The store is read by workers that post what they read; the handlers here
    own every widget."""

    DEFAULT_CSS = """
    SessionBrowser {
        layout: vertical;
        #browser-header { height: 1; background: $primary; color: $text; padding: 0 1; }
        #browser-body { height: 1fr; }
        #browser-left { width: 3fr; }
        #browser-heading { height: 1; color: $text-muted; text-style: bold; }
        #browser-filter { height: 3; }
        #browser-list { height: 1fr; }
        #browser-right { width: 2fr; border-left: solid $primary; }
        #browser-session { height: 1; color: $text-muted; text-style: bold; padding: 0 1; }
        #browser-preview { height: 1fr; }
        #browser-status {
            height: 1; background: $primary-darken-2; color: $text; padding: 0 1;
        }
    }
    /* Under 100 columns the preview goes below the list, so both keep the full width. */
    SessionBrowser.-narrow {
        #browser-body { layout: vertical; }
        #browser-left { width: 1fr; height: 3fr; }
        #browser-right { width: 1fr; height: 2fr; border-left: none; }
        #browser-session { background: $primary-darken-1; color: $text; }
    }
    """

    # Textual declares this as an instance variable, so it cannot be annotated ClassVar here.
    HORIZONTAL_BREAKPOINTS = [  # noqa: RUF012
        (0, "-narrow"),
        (NARROW_BELOW, "-wide"),
    ]

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("escape", "back_to_list", "List", show=False),
        Binding("slash", "filter", "Filter", show=False),
    ]

    all_rows: var[tuple[SessionRow, ...]] = var((), init=False)
    """Every session of the store, as listed; the filter narrows what is shown of them."""
    loaded: var[bool] = var(False, init=False)
    """Whether the listing has been read; the screen answers keys before that."""
    problem: var[str] = var("", init=False)
    """Why the listing could not be read."""
    notice: var[str] = var("", init=False)
    """A one-off answer to a key, shown in the status line in place of the key list."""

    class ListingRead(Message, bubble=False):
        def __init__(self, rows: tuple[SessionRow, ...], problem: str) -> None:
            super().__init__()
            self.rows = rows
            self.problem = problem

    class PreviewRead(Message, bubble=False):
        def __init__(self, transcript: Transcript) -> None:
            super().__init__()
            self.transcript = transcript

    class ConversationRead(Message, bubble=False):
        """A session read in full, to open in the viewer."""

        def __init__(self, conversation: Conversation) -> None:
            super().__init__()
            self.conversation = conversation

    class SessionRemoved(Message, bubble=False):
        def __init__(self, run_id: str) -> None:
            super().__init__()
            self.run_id = run_id

    def __init__(self, store: SessionStore, *, now: Callable[[], datetime] | None = None) -> None:
        """``now`` is the clock the listing's relative times count from: a fixed one in
        tests, the real one without it."""
        super().__init__()
        self.store = store
        self.now = now or current_time

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
                yield Static("", markup=False, id="browser-heading")
                yield SessionList(id="browser-list")
            with Vertical(id="browser-right"):
                # The id of the highlighted session: at 80 columns the list has no room for it.
                yield Static(NOTHING_HIGHLIGHTED, markup=False, id="browser-session")
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
        listing = self.session_list
        self.watch(listing, "columns", self._show_heading)
        listing.focus()
        self._read_listing()

    def _show_heading(self, columns: Columns) -> None:
        self.query_one("#browser-heading", Static).update(columns.heading)

    @work(group="listing", exclusive=True, exit_on_error=False)
    async def _read_listing(self) -> None:
        from fisk_ai.errors import FiskError

        problem = ""
        try:
            summaries = await self.store.list()
        except FiskError as error:
            problem = single_line(str(error), 300)
            summaries = []
        except Exception as error:  # A backend failing must leave a readable screen behind.
            problem = single_line(f"{type(error).__name__}: {error}", 300)
            summaries = []
        # A row formats its line when it is first drawn or filtered, so this costs next to
        # nothing for thousands of sessions.
        now = self.now()
        rows = tuple(SessionRow(summary, now) for summary in summaries)
        self.post_message(self.ListingRead(rows, problem))

    def on_session_browser_listing_read(self, message: SessionBrowser.ListingRead) -> None:
        self.problem = message.problem
        self.all_rows = message.rows
        self.loaded = True

    def watch_all_rows(self) -> None:
        if self.loaded:
            self._apply_filter()

    def watch_loaded(self) -> None:
        self._apply_filter()

    def on_resize(self) -> None:
        self._show_status()

    def watch_problem(self) -> None:
        self._show_status()

    def watch_notice(self) -> None:
        self._show_status()

    def _apply_filter(self) -> None:
        needle = self.filter_field.value.casefold().strip()
        rows = list(self.all_rows)
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
            keys = BROWSER_KEYS if self.size.width >= NARROW_BELOW else NARROW_BROWSER_KEYS
            told = self.notice or keys
            counted = plural(len(self.all_rows), "session")
            status.update(f"{shown} of {counted}   {told}")

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
        self.notice = ""
        summary = message.summary
        shown = self.query_one("#browser-session", Static)
        if summary is None:
            shown.update(NOTHING_HIGHLIGHTED)
            self.preview.show(Transcript())
            return
        shown.update(f"session {single_line(summary.run_id)}")
        self._read_preview(summary.run_id)

    async def _read(self, run_id: str) -> Conversation:
        from fisk_ai.sessions import fold

        return fold(await self.store.read(run_id))

    @work(group="preview", exclusive=True, exit_on_error=False)
    async def _read_preview(self, run_id: str) -> None:
        from fisk_ai.errors import FiskError

        try:
            conversation = await self._read(run_id)
        except FiskError as error:
            transcript = Transcript()
            transcript.add_meta(f"cannot read session {run_id}: {single_line(str(error), 300)}")
        else:
            transcript = transcript_of(conversation)
        self.post_message(self.PreviewRead(transcript))

    def on_session_browser_preview_read(self, message: SessionBrowser.PreviewRead) -> None:
        self.preview.show(message.transcript)

    def on_session_list_chosen(self, message: SessionList.Chosen) -> None:
        self._read_to_open(message.summary.run_id)

    @work(group="open", exclusive=True, exit_on_error=False)
    async def _read_to_open(self, run_id: str) -> None:
        from fisk_ai.errors import FiskError

        try:
            conversation = await self._read(run_id)
        except FiskError as error:
            self.notify(single_line(str(error), 300), severity="error", markup=False)
            return
        self.post_message(self.ConversationRead(conversation))

    def on_session_browser_conversation_read(
        self, message: SessionBrowser.ConversationRead
    ) -> None:
        self.app.push_screen(TranscriptScreen(message.conversation))

    def on_session_list_resume_asked(self, message: SessionList.ResumeAsked) -> None:
        summary = message.summary
        state = session_state(summary)
        if state in (SessionState.COMPLETED, SessionState.CORRUPT):
            self.notice = f"session {summary.run_id} is {state.value} and cannot resume"
        else:
            self.dismiss(summary.run_id)

    def on_session_list_remove_asked(self, message: SessionList.RemoveAsked) -> None:
        run_id = message.summary.run_id
        question = ConfirmQuestion(f"Remove session {run_id}? Its journal is deleted.")

        def answered(confirmed: bool | None) -> None:
            if confirmed:
                self._remove(run_id)

        self.app.push_screen(ConfirmScreen(question), answered)

    @work(group="remove", exit_on_error=False)
    async def _remove(self, run_id: str) -> None:
        from fisk_ai.errors import FiskError

        try:
            await self.store.remove(run_id)
        except FiskError as error:
            self.notify(single_line(str(error), 300), severity="error", markup=False)
            return
        self.post_message(self.SessionRemoved(run_id))

    def on_session_browser_session_removed(self, message: SessionBrowser.SessionRemoved) -> None:
        run_id = message.run_id
        # First off the list as shown, so the row that takes its place keeps the highlight.
        self.session_list.drop(run_id)
        self.all_rows = tuple(row for row in self.all_rows if row.summary.run_id != run_id)
        self.notify(f"removed session {run_id}", timeout=2, markup=False)

    def action_filter(self) -> None:
        self.filter_field.focus()

    def action_back_to_list(self) -> None:
        """Esc: empty the filter and go back to the list, as the bottom bar says."""
        self.filter_field.value = ""
        self.session_list.focus()

    def action_quit(self) -> None:
        self.dismiss(None)
