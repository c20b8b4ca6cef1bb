"""A tiny app that mounts only the transcript viewport, for Pilot and snapshot tests."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual.app import App, ComposeResult

from fisk_ai.agent.events import Event
from fisk_ai.tui.transcript import Transcript
from fisk_ai.tui.widgets.transcript_view import TranscriptView


class ViewerApp(App[None]):
    def __init__(
        self, events: Iterable[Event], copy_directory: Path, transcript: Transcript | None = None
    ) -> None:
        super().__init__()
        self._events = list(events)
        self._copy_directory = copy_directory
        self._transcript = transcript
        self.search_requests = 0

    def compose(self) -> ComposeResult:
        yield TranscriptView(self._transcript, copy_directory=self._copy_directory)

    def on_mount(self) -> None:
        self.theme = "textual-dark"
        view = self.query_one(TranscriptView)
        view.append(self._events)
        view.focus()

    def on_transcript_view_search_requested(self) -> None:
        self.search_requests += 1

    @property
    def view(self) -> TranscriptView:
        return self.query_one(TranscriptView)
