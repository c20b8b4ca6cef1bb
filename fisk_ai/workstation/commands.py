"""The run screen's actions in Textual's command palette, each with the key that does it.

The commands are read from the bindings of the app, the run screen and the transcript, so the
palette offers exactly what the keys do and cannot drift from them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.screen import Screen

from fisk_ai.screens.run import RunScreen
from fisk_ai.tui.widgets.transcript_view import TranscriptView


@dataclass(frozen=True)
class PaletteCommand:
    """One action: what it does, the keys that do it, and how to run it from the palette."""

    title: str
    keys: str
    run: Callable[[], object]

    @property
    def help(self) -> str:
        return f"key: {self.keys}"


def keys_text(app: App[Any], binding: Binding) -> str:
    """``g / Home`` for a binding of ``g,home``, as the footer would write each key."""
    keys = [key.strip() for key in binding.key.split(",")]
    return " / ".join(app.get_key_display(replace(binding, key=key)) for key in keys)


def bound_commands(node: DOMNode, app: App[Any]) -> list[PaletteCommand]:
    """A command for each binding ``node`` declares itself, run on ``node``."""
    commands = []
    for binding in node.BINDINGS:
        if not isinstance(binding, Binding) or binding.action == "command_palette":
            continue
        run = partial(app.run_action, binding.action, node)
        commands.append(PaletteCommand(binding.description, keys_text(app, binding), run))
    return commands


def run_screen_commands(app: App[Any], screen: Screen[Any]) -> list[PaletteCommand]:
    """The app's keys, the run screen's and the transcript's, in that order; none when the
    palette was opened over another screen (a question or the help)."""
    if not isinstance(screen, RunScreen):
        return []
    view = screen.query_one(TranscriptView)
    return [*bound_commands(app, app), *bound_commands(screen, app), *bound_commands(view, app)]


class RunCommands(Provider):
    """Every action of the run screen, found by its description."""

    def _commands(self) -> list[PaletteCommand]:
        return run_screen_commands(self.app, self.screen)

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(command.title, command.run, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(score, matcher.highlight(command.title), command.run, help=command.help)
