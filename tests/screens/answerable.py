"""Waiting for a question modal to take keys: a question ignores keys for a short guard after it
is drawn, so a test that answers one waits for its ``answerable`` event rather than for time."""

from __future__ import annotations

from typing import Any

from textual.app import App

from fisk_ai.screens.question import QuestionModal


async def until_answerable(app: App[Any]) -> QuestionModal[Any, Any]:
    """The question on screen, once it takes keys."""
    screen = app.screen
    assert isinstance(screen, QuestionModal), f"no question is up: {screen!r}"
    await screen.answerable.wait()
    return screen
