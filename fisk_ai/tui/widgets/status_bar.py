"""The run screen's status bar: the run's state word, what it is doing and for how long, and
the counters, fitted to the width it has."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from fisk_ai.tui.setup import RunSetup
from fisk_ai.tui.status import Counters, RetryWait, RunState, StatusLine


class StatusBar(Static):
    run_state: reactive[RunState] = reactive(RunState.RUNNING)
    counters: reactive[Counters] = reactive(Counters)
    setup: reactive[RunSetup] = reactive(RunSetup)
    session: reactive[str] = reactive("")
    activity: reactive[str] = reactive("")
    """What the run is doing now: a tool, the model, a stop waiting for a tool."""
    activity_seconds: reactive[int] = reactive(0)
    retry_wait: reactive[RetryWait | None] = reactive(None)
    help_key: reactive[str] = reactive("?")

    def watch_run_state(self, state: RunState) -> None:
        for known in RunState:
            self.set_class(known is state, known.css_class)

    @property
    def line(self) -> StatusLine:
        shows_activity = self.run_state in (RunState.RUNNING, RunState.SUSPENDING)
        activity = self.activity if shows_activity else ""
        return StatusLine(
            self.run_state,
            self.counters,
            self.setup.model,
            self.session,
            activity=activity,
            elapsed=self.activity_seconds,
            help_key=self.help_key,
            retry=self.retry_wait if activity else None,
        )

    def render(self) -> Content:
        return Content(self.line.text(self.content_region.width or None))
