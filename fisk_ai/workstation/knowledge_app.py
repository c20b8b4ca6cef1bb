"""KnowledgeApp: the knowledge explorer on its own, for ``fisk knowledge browse`` on a
terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from fisk_ai.screens.knowledge import DEFAULT_TOP_K, KnowledgeExplorer
from fisk_ai.tui.theme import terminal_theme

if TYPE_CHECKING:
    from fisk_ai.knowledge.access import KnowledgeIndex


class KnowledgeApp(App[None]):
    """Opens the explorer over ``index`` and leaves when it closes (Esc, or Ctrl-C anywhere).
    The index stays the caller's to close."""

    ENABLE_COMMAND_PALETTE = False
    TITLE = "fisk-ai knowledge"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "quit", "Quit", priority=True, show=False),
    ]

    def __init__(self, index: KnowledgeIndex, *, top_k: int = DEFAULT_TOP_K) -> None:
        super().__init__()
        self.theme = terminal_theme()
        self.index = index
        self.top_k = top_k

    def on_mount(self) -> None:
        self.push_screen(KnowledgeExplorer(self.index, top_k=self.top_k), self._explorer_closed)

    def _explorer_closed(self, _: None) -> None:
        self.exit()
