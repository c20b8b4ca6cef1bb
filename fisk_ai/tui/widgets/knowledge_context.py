"""One chunk of a document as the explorer's reader shows it: its number and section, then its
text, with the words the search matched highlighted; the chunk that was opened is marked."""

from __future__ import annotations

import re
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
    flowing, moved = reflowed(strip_control(chunk.body))
    body = Text(flowing)
    for start, end in spans:
        body.stylize(MATCH_STYLE, moved[start], moved[end])
    text.append_text(body)
    return text


# A line that starts a block of its own rather than going on with the paragraph above.
_BLOCK_START = re.compile(r"\s*(?:[-*+]\s|\d+[.)]\s|#|>|\||```|~~~)|\s{4}")
_NOT_PROSE = re.compile(r"\s*(?:#|\||```|~~~)")


def reflowed(body: str) -> tuple[str, list[int]]:
    """``body`` with the line breaks inside a paragraph joined into spaces (and the
    continuation's indent dropped), so the reader wraps prose at its own width rather than at
    the source's; lists, headings, tables, quotes and code keep their lines. Also, for each
    offset of ``body`` (and its end), the offset it moved to."""
    lines = body.split("\n")
    pieces: list[str] = []
    moved: list[int] = []
    fenced = False
    joined = False
    length = 0
    for index, line in enumerate(lines):
        if index:
            previous = lines[index - 1]
            joined = (
                not fenced
                and previous.strip() != ""
                and line.strip() != ""
                and not _NOT_PROSE.match(previous)
                and not _BLOCK_START.match(line)
            )
            moved.append(length)
            pieces.append(" " if joined else "\n")
            length += 1
        indent = len(line) - len(line.lstrip()) if index and joined else 0
        moved.extend([length] * indent)
        shown = line[indent:]
        if shown.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        moved.extend(range(length, length + len(shown)))
        pieces.append(shown)
        length += len(shown)
    moved.append(length)
    return "".join(pieces), moved


class ChunkBlock(Static):
    """A chunk in the reader; the opened one has the ``-opened`` class."""

    DEFAULT_CSS = """
    ChunkBlock { padding: 0 1 1 1; }
    ChunkBlock.-opened { border-left: thick $accent; background: $boost; padding: 0 1 1 0; }
    """

    def __init__(self, chunk: Hit, spans: Sequence[tuple[int, int]], *, opened: bool) -> None:
        super().__init__(chunk_text(chunk, spans, opened=opened), markup=False)
        self.set_class(opened, "-opened")
