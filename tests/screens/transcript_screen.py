"""The transcript screen's viewport as drawn."""

from __future__ import annotations

from typing import Any

from textual.app import App

from fisk_ai.screens.transcript import TranscriptScreen


def screen_text(app: App[Any]) -> str:
    screen = app.screen
    assert isinstance(screen, TranscriptScreen)
    view = screen.view
    return "\n".join(strip.text for strip in (view.render_line(y) for y in range(view.size.height)))
