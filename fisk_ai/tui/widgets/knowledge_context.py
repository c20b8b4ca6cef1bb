"""One chunk of a document as the explorer's reader shows it: its number and section, then its
text, with the words the search matched highlighted; the chunk that was opened is marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from fisk_ai.tui.widgets.knowledge_results import MATCH_STYLE
from fisk_ai.util.sanitize import single_line, strip_control

if TYPE_CHECKING:
    from fisk_ai.knowledge.search import Hit

OPENED_MARK = "> opened"


def chunk_text(chunk: Hit, spans: Sequence[tuple[int, int]], *, opened: bool) -> Text:
    """The chunk's citation and section on one line, its body below. ``spans`` index into
    ``strip_control(chunk.body)``."""
    text = Text.assemble((single_line(chunk.citation), "bold"))
    if chunk.heading_path:
        text.append(f"  {single_line(chunk.heading_path)}", style="italic")
    if opened:
        text.append(f"  {OPENED_MARK}", style="bold")
    text.append("\n")
    body = Text(strip_control(chunk.body))
    for start, end in spans:
        body.stylize(MATCH_STYLE, start, end)
    text.append_text(body)
    return text


class ChunkBlock(Static):
    """A chunk in the reader; the opened one has the ``-opened`` class."""

    DEFAULT_CSS = """
    ChunkBlock { padding: 0 1 1 1; }
    ChunkBlock.-opened { border-left: thick $accent; background: $boost; padding: 0 1 1 0; }
    """

    def __init__(self, chunk: Hit, spans: Sequence[tuple[int, int]], *, opened: bool) -> None:
        super().__init__(chunk_text(chunk, spans, opened=opened), markup=False)
        self.set_class(opened, "-opened")
