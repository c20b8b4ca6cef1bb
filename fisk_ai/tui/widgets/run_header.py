"""The run screen's header: the version, the agent, the model and the session."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from fisk_ai.tui.setup import RunSetup
from fisk_ai.util.sanitize import single_line


def header_text(setup: RunSetup, session: str) -> str:
    # The session leads after the version: it is what a narrow terminal must still show.
    parts = [f"fisk-ai {setup.version}".rstrip()]
    if session:
        parts.append(f"session={session}")
    if setup.identity:
        parts.append(f"agent={single_line(setup.identity, 60)}")
    if setup.model:
        parts.append(f"model={single_line(setup.model, 40)}")
    return "  ".join(parts)


class RunHeader(Static):
    setup: reactive[RunSetup] = reactive(RunSetup)
    session: reactive[str] = reactive("")

    def render(self) -> Content:
        return Content(header_text(self.setup, self.session))
