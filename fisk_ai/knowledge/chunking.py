"""Cutting a markdown or text file into chunks: split on headings, pack by size in bytes.

A heading ends the section before it and moves the breadcrumb (``Install > Linux``), which each
chunk keeps apart from its body. Inside a section, blocks (paragraphs, and fenced code blocks
kept whole) are packed into chunks of about 1200 bytes; a paragraph over 1500 bytes is cut into
1200-byte slices, each ending on a character boundary. The heading lines themselves are not in
any body: the breadcrumb carries them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PACK_BYTES", "SPLIT_BYTES", "Chunk", "Chunked", "chunk_text"]

PACK_BYTES = 1200
SPLIT_BYTES = 1500
_BREADCRUMB_SEPARATOR = " > "
_HEADING = re.compile(r"^(#{1,6})(.*)$")
_FENCES = ("```", "~~~")


@dataclass(frozen=True)
class Chunk:
    heading_path: str
    body: str


@dataclass(frozen=True)
class Chunked:
    """A file's chunks and its title (the text of its first heading, "" without one)."""

    title: str
    chunks: tuple[Chunk, ...]


@dataclass(frozen=True)
class _Block:
    text: str
    fenced: bool


def _heading(line: str) -> tuple[int, str] | None:
    match = _HEADING.match(line.strip())
    if match is None:
        return None
    text = match.group(2).strip().rstrip("#").strip()
    if not text:
        return None
    return len(match.group(1)), text


def _fence_marker(line: str) -> str | None:
    stripped = line.strip()
    for marker in _FENCES:
        if stripped.startswith(marker):
            return marker
    return None


def _slices(text: str, size: int) -> list[str]:
    """``text`` in pieces of at most ``size`` bytes, never splitting a character."""
    data = text.encode()
    pieces: list[str] = []
    start = 0
    while start < len(data):
        end = min(start + size, len(data))
        # Back off from a continuation byte so every slice decodes on its own.
        while end < len(data) and end > start + 1 and (data[end] & 0xC0) == 0x80:
            end -= 1
        pieces.append(data[start:end].decode())
        start = end
    return pieces


class _Packer:
    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self._buffer: list[str] = []
        self._size = 0

    def add(self, heading_path: str, block: _Block) -> None:
        size = len(block.text.encode())
        if not block.fenced and size > SPLIT_BYTES:
            self.flush(heading_path)
            for piece in _slices(block.text, PACK_BYTES):
                self.chunks.append(Chunk(heading_path, piece))
            return
        if self._buffer and self._size + size + 2 > PACK_BYTES:
            self.flush(heading_path)
        self._size += size + (2 if self._buffer else 0)
        self._buffer.append(block.text)

    def flush(self, heading_path: str) -> None:
        if self._buffer:
            body = "\n\n".join(self._buffer)
            if body.strip():
                self.chunks.append(Chunk(heading_path, body))
        self._buffer = []
        self._size = 0


def _blocks(lines: list[str]) -> list[tuple[tuple[int, str] | None, _Block | None]]:
    """The file as a sequence of headings and blocks, in order."""
    items: list[tuple[tuple[int, str] | None, _Block | None]] = []
    paragraph: list[str] = []
    index = 0

    def end_paragraph() -> None:
        if paragraph:
            items.append((None, _Block("\n".join(paragraph), fenced=False)))
            paragraph.clear()

    while index < len(lines):
        line = lines[index]
        marker = _fence_marker(line)
        if marker is not None:
            end_paragraph()
            fence = [line]
            index += 1
            while index < len(lines):
                fence.append(lines[index])
                index += 1
                if lines[index - 1].strip().startswith(marker):
                    break
            items.append((None, _Block("\n".join(fence), fenced=True)))
            continue
        heading = _heading(line)
        if heading is not None:
            end_paragraph()
            items.append((heading, None))
        elif line.strip():
            paragraph.append(line)
        else:
            end_paragraph()
        index += 1
    end_paragraph()
    return items


def chunk_text(text: str) -> Chunked:
    """Chunk one file's text."""
    lines = text.replace("\r\n", "\n").split("\n")
    stack: list[tuple[int, str]] = []
    title = ""
    packer = _Packer()
    breadcrumb = ""
    for heading, block in _blocks(lines):
        if heading is not None:
            packer.flush(breadcrumb)
            level, heading_text = heading
            title = title or heading_text
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append(heading)
            breadcrumb = _BREADCRUMB_SEPARATOR.join(text for _, text in stack)
        elif block is not None:
            packer.add(breadcrumb, block)
    packer.flush(breadcrumb)
    return Chunked(title, tuple(packer.chunks))
