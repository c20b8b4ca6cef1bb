"""A Textual app under test: drawn the same on every machine, and looked at only once it has
finished what a key asked.

``pinned`` fixes what Textual would otherwise take from the developer's terminal (the theme,
from ``TEXTUAL_THEME`` when Textual was imported) and turns animations off, so Pilot sees the end
state of every transition at once; ``SteadyCursors`` stops the text cursors blinking.

``pilot.pause()`` waits until the process looks idle by comparing CPU time with wall time; on a
busy machine a process starved of CPU looks idle too, so a frame taken after it can miss a
search whose message was still queued. ``settled`` waits on the app's own state instead: every
message queue drained and every worker finished, twice in a row.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from textual import events
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from fisk_ai.tui.theme import DARK_THEME
from tests.patience import DEADLINE

AppT = TypeVar("AppT", bound=App[Any])


def pinned(app: AppT) -> AppT:
    """``app`` in the dark theme with animations off, whatever the terminal says."""
    app.theme = DARK_THEME
    app.animation_level = "none"
    return app


def _busy(app: App[Any]) -> bool:
    if any(not worker.is_finished for worker in app.workers):
        return True
    pumps = [app, *app.screen_stack]
    for screen in app.screen_stack:
        pumps.extend(screen.walk_children())
    return any(pump.message_queue_size for pump in pumps)


class SteadyCursors:
    """Mixed into a test app: a text field that takes the focus shows its cursor without
    blinking, since a blink is a clock and a frame taken on a busy machine lands on either half
    of it."""

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, Input | TextArea):
            event.widget.cursor_blink = False


async def settled(pilot: Pilot[Any]) -> None:
    """Return once ``pilot``'s app has no message waiting and no worker running; a handler
    that starts a worker or posts a message is seen on the next look, hence two quiet looks."""
    app = pilot.app
    async with asyncio.timeout(DEADLINE):
        quiet_looks = 0
        while quiet_looks < 2:
            await pilot.pause()
            if _busy(app):
                quiet_looks = 0
                await app.workers.wait_for_complete()
            else:
                quiet_looks += 1
