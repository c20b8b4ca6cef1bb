"""The startup card: who is starting, on what, with which tools, and what startup is doing,
shown until the first response."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from fisk_ai.tui.setup import RunSetup
from fisk_ai.tui.transcript import plural
from fisk_ai.util.sanitize import single_line

STARTUP_WIDTH = 36
"""The width of the startup card's values, in characters."""
STARTUP_WARNINGS_SHOWN = 3
STARTUP_WAITING = "starting: waiting for first response"
SPINNER = "|/-\\"
"""The startup card's spinner, one frame per tick of ``SPINNER_SECONDS``."""
SPINNER_SECONDS = 0.125


def startup_text(setup: RunSetup, directory: str | None = None, spinner: int | None = None) -> str:
    """The card shown until the first response: who is starting, on what, with which tools,
    and what went wrong on the way; the last line says what startup is doing, after frame
    ``spinner`` of the spinner (none when None)."""
    home = str(Path.home())
    if directory is None:
        directory = str(Path.cwd())
        if directory.startswith(home):
            directory = "~" + directory[len(home) :]
    gated = sum(1 for tool in setup.tools if tool.gated)
    tools = plural(len(setup.tools), "tool") + (f", {gated} gated" if gated else "")
    if setup.phase and not setup.tools:
        tools = "-"  # not loaded yet
    rows = [
        f"version  {single_line(setup.version, STARTUP_WIDTH) or '-'}",
        f"agent    {single_line(setup.identity, STARTUP_WIDTH) or '-'}",
        f"model    {single_line(setup.model, STARTUP_WIDTH) or '-'}",
        f"tools    {tools}",
        f"dir      {_left_elided(directory, STARTUP_WIDTH)}",
    ]
    if setup.telemetry:
        rows.append(f"telemetry {single_line(setup.telemetry, STARTUP_WIDTH - 1)}")
    if setup.warnings:
        rows += ["", plural(len(setup.warnings), "warning")]
        rows += [
            f"  {single_line(warning, STARTUP_WIDTH + 5)}"
            for warning in setup.warnings[:STARTUP_WARNINGS_SHOWN]
        ]
        hidden = len(setup.warnings) - STARTUP_WARNINGS_SHOWN
        if hidden > 0:
            rows.append(f"  and {hidden} more in the transcript")
    doing = f"starting: {setup.phase}" if setup.phase else STARTUP_WAITING
    if spinner is not None:
        doing = f"{SPINNER[spinner % len(SPINNER)]} {doing}"
    rows += ["", doing]
    return "\n".join(rows)


def _left_elided(text: str, limit: int) -> str:
    return text if len(text) <= limit else "..." + text[-(limit - 3) :]


class StartupCard(Static):
    setup: reactive[RunSetup] = reactive(RunSetup)
    spinner: reactive[int | None] = reactive(None)
    """The spinner's frame while the agent is being hosted; None draws no spinner."""

    def render(self) -> Content:
        return Content(startup_text(self.setup, spinner=self.spinner))
