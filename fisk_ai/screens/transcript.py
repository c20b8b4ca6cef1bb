"""The read-only transcript viewer: a stored conversation folded as the run screen folds it, with
the viewport's keys (z/Z, / with n/N, g/G) and q or Esc to close."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input, Static

from fisk_ai.presentation import session_state
from fisk_ai.tui.transcript import plural, transcript_of
from fisk_ai.tui.widgets.search_input import SearchInput
from fisk_ai.tui.widgets.transcript_view import TranscriptView
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.sessions import Conversation

VIEWER_KEYS = "z/Z fold  / search  n/N next/prev  g/G top/bottom  [ ] prompts  q close"


def viewer_header(conversation: Conversation) -> str:
    """The session's id first, so it shows at any width, then how it stands in the word the
    browser and ``fisk session ls`` use, the model and the tokens."""
    usage = conversation.usage
    parts = [
        f"session {single_line(conversation.run_id)}",
        session_state(conversation).value,
        f"model={single_line(conversation.meta.fingerprint.model, 40) or '-'}",
        f"tokens={usage.input_tokens} in / {usage.output_tokens} out",
    ]
    return "  ".join(parts)


class TranscriptScreen(Screen[None]):
    """One stored conversation, read-only; q and Esc dismiss it, and whoever opened it decides
    what comes next."""

    DEFAULT_CSS = """
    TranscriptScreen { layout: vertical; }
    TranscriptScreen #viewer-header {
        height: 1; background: $primary; color: $text; padding: 0 1;
    }
    TranscriptScreen #viewer { height: 1fr; }
    TranscriptScreen #viewer-search { height: 3; }
    TranscriptScreen #viewer-status {
        height: 1; background: $primary-darken-2; color: $text; padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q,escape", "close", "Close"),
    ]

    def __init__(self, conversation: Conversation, *, thinking: bool = False) -> None:
        """``thinking`` opens with the model's reasoning shown (``--thinking``); z toggles it."""
        super().__init__()
        self.conversation = conversation
        self.thinking = thinking

    def compose(self) -> ComposeResult:
        yield Static(viewer_header(self.conversation), markup=False, id="viewer-header")
        yield TranscriptView(
            transcript_of(self.conversation, thinking_folded=not self.thinking), id="viewer"
        )
        yield SearchInput(id="viewer-search")
        yield Static(VIEWER_KEYS, markup=False, id="viewer-status")

    @property
    def view(self) -> TranscriptView:
        return self.query_one("#viewer", TranscriptView)

    def on_mount(self) -> None:
        self.query_one(SearchInput).display = False
        view = self.view
        view.focus()
        self.call_after_refresh(view.action_top)

    def on_transcript_view_search_requested(self) -> None:
        field = self.query_one(SearchInput)
        field.display = True
        field.focus()

    @on(Input.Submitted, "#viewer-search")
    def searched(self, event: Input.Submitted) -> None:
        event.stop()
        field = self.query_one(SearchInput)
        count = self.view.search(event.value)
        field.value = ""
        field.display = False
        self.view.focus()
        label = self.view.match_position
        found = f"{plural(count, 'matching line')} ({label})" if count else "no match"
        self.query_one("#viewer-status", Static).update(f"{found}   {VIEWER_KEYS}")

    def on_transcript_view_match_shown(self, message: TranscriptView.MatchShown) -> None:
        self.query_one("#viewer-status", Static).update(f"match {message.position}   {VIEWER_KEYS}")

    def action_close(self) -> None:
        self.dismiss(None)
