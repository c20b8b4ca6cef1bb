"""Cutting a markdown or text file into chunks: split on headings, pack by size in bytes.

The rules are the Go original's, so a corpus indexed by either gives the same chunks, the same
ordinals and so the same citations:

- A heading is a line (leading and trailing white space aside) of one to six ``#`` followed by
  text; no space is needed after the marks and trailing marks are part of the text
  (``## Title ##`` is the heading ``Title ##``). Seven or more marks, or marks alone, make an
  ordinary line. A heading ends the section before it and moves the breadcrumb
  (``Install > Linux``), which each chunk keeps apart from its body; the heading line itself is
  in no body.
- A line opening with three backticks or three tildes starts a fenced block, which runs to the
  next line opening with the same mark (or the end of the file) and is never split.
- Other text is cut into blocks at blank lines, fences and headings.
- Inside a section the blocks are packed: each costs its size in bytes plus 2 (the blank line
  that joins it to the next), and a new chunk starts when the next block would take the running
  cost past 1200 bytes. A paragraph over 1500 bytes is first cut into 1200-byte slices, which
  are packed like blocks, so its last slice may share a chunk with what follows.

Go cuts those slices at exact byte offsets, even inside a character; here a cut that would fall
inside a character moves back to the character's first byte, so every chunk is valid text and
the slices still start on Go's 1200-byte grid (docs/compatibility.md).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

__all__ = ["PACK_BYTES", "SPLIT_BYTES", "WHITE_SPACE", "Chunk", "Chunked", "split_into_chunks"]

PACK_BYTES = 1200
SPLIT_BYTES = 1500
# What each packed block costs beyond its own bytes: the "\n\n" joining it to its neighbour.
_JOIN_COST = 2
_BREADCRUMB_SEPARATOR = " > "
_MAX_HEADING_LEVEL = 6
_FENCES = ("```", "~~~")
# Go's unicode.IsSpace, which trims lines and cuts queries there; Python's str.strip() also
# trims the four information separators (U+001C to U+001F), which would make a different
# heading, block or query term.
WHITE_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)


@dataclass(frozen=True)
class Chunk:
    heading_path: str
    body: str


@dataclass(frozen=True)
class Chunked:
    """A file's chunks and its title (the text of its first heading, "" without one)."""

    title: str
    chunks: tuple[Chunk, ...]


def _trim(line: str) -> str:
    return line.strip(WHITE_SPACE)


def _heading(trimmed: str) -> tuple[int, str] | None:
    level = len(trimmed) - len(trimmed.lstrip("#"))
    if not 1 <= level <= _MAX_HEADING_LEVEL:
        return None
    text = _trim(trimmed[level:])
    return (level, text) if text else None


def _fence_marker(trimmed: str) -> str | None:
    for marker in _FENCES:
        if trimmed.startswith(marker):
            return marker
    return None


def _slices(text: str) -> list[str]:
    """A long paragraph in pieces on the 1200-byte grid, each cut moved back to the first
    byte of the character it would split."""
    data = text.encode()
    cuts = [0]
    for grid in range(PACK_BYTES, len(data), PACK_BYTES):
        cut = grid
        # A UTF-8 continuation byte is 10xxxxxx; step back to the byte that starts it.
        while cut > cuts[-1] and (data[cut] & 0xC0) == 0x80:
            cut -= 1
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(len(data))
    return [data[start:end].decode() for start, end in itertools.pairwise(cuts)]


@dataclass
class _Section:
    """The blocks of one section under one breadcrumb, packed into chunk bodies."""

    breadcrumb: str
    bodies: list[str] = field(default_factory=list)
    _pending: list[str] = field(default_factory=list)
    _cost: int = 0

    def add(self, block: str, *, fenced: bool) -> None:
        block = block.rstrip("\n")
        if not _trim(block):
            return
        if not fenced and len(block.encode()) > SPLIT_BYTES:
            for piece in _slices(block):
                self._pack(piece)
            return
        self._pack(block)

    def _pack(self, block: str) -> None:
        cost = len(block.encode()) + _JOIN_COST
        if self._pending and self._cost + cost > PACK_BYTES:
            self._close_chunk()
        self._pending.append(block)
        self._cost += cost

    def _close_chunk(self) -> None:
        self.bodies.append("\n\n".join(self._pending))
        self._pending = []
        self._cost = 0

    def chunks(self) -> list[Chunk]:
        if self._pending:
            self._close_chunk()
        return [Chunk(self.breadcrumb, body) for body in self.bodies]


def _fence_end(lines: list[str], start: int, marker: str) -> int:
    """The index just past the fenced block opening at ``lines[start]``."""
    index = start + 1
    while index < len(lines):
        index += 1
        if _trim(lines[index - 1]).startswith(marker):
            break
    return index


def _paragraph_end(lines: list[str], start: int) -> int:
    """The index just past the run of lines opening at ``lines[start]`` that a blank line, a
    fence or a heading ends."""
    index = start
    while index < len(lines):
        trimmed = _trim(lines[index])
        if not trimmed or _fence_marker(trimmed) or _heading(trimmed):
            break
        index += 1
    return index


def split_into_chunks(text: str) -> Chunked:
    """Chunk one file's text."""
    lines = text.replace("\r\n", "\n").split("\n")
    chunks: list[Chunk] = []
    stack: list[tuple[int, str]] = []
    title = ""
    section = _Section("")
    index = 0
    while index < len(lines):
        trimmed = _trim(lines[index])
        marker = _fence_marker(trimmed)
        if marker is not None:
            end = _fence_end(lines, index, marker)
            section.add("\n".join(lines[index:end]), fenced=True)
            index = end
            continue
        heading = _heading(trimmed)
        if heading is not None:
            chunks += section.chunks()
            title = title or heading[1]
            while stack and stack[-1][0] >= heading[0]:
                stack.pop()
            stack.append(heading)
            section = _Section(_BREADCRUMB_SEPARATOR.join(text for _, text in stack))
            index += 1
            continue
        if not trimmed:
            index += 1
            continue
        end = _paragraph_end(lines, index)
        section.add("\n".join(lines[index:end]), fenced=False)
        index = end
    chunks += section.chunks()
    return Chunked(title, tuple(chunks))
