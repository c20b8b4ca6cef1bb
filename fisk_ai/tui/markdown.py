"""The model's prose as styled lines: markdown parsed once, wrapped to any width later.

Parsing is width-independent and happens once per block; wrapping the result to a width is as
cheap as wrapping plain text, so a resize re-wraps without parsing again. The text is parsed as
markdown only, never as Rich or Textual markup: every piece comes out as plain text with an
emphasis flag beside it.

A line break the model wrote stays a line break (a soft break is not joined into the line
before it), so each source line starts a row of its own and a search hit on a source line can
be shown on the rows it became.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

# Anything markdown could act on; text without any of it is drawn as plain lines, unparsed.
_MARKDOWN_HINT = re.compile(r"[*_`\[\]<&\\~]|^[ \t]*(?:[#>=+|-]|\d+[.)])|^(?: {4}|\t)", re.M)

BULLET = "\u2022 "
QUOTE_BAR = "\u2502 "
RULE_CHARACTER = "\u2500"
CODE_INDENT = "  "
CELL_SEPARATOR = " \u2502 "
HEADER_CROSSING = "\u2500\u253c\u2500"


class Emphasis(enum.Flag):
    NONE = 0
    BOLD = enum.auto()
    ITALIC = enum.auto()
    UNDERLINE = enum.auto()
    STRIKE = enum.auto()
    CODE = enum.auto()
    DIM = enum.auto()


Span = tuple[str, Emphasis]


@dataclass(frozen=True)
class MarkdownLine:
    """One source line as drawn: ``prefix`` leads its first row (a bullet, a quote bar),
    ``hanging`` leads the rows it wraps onto. ``line`` counts from the first line of the text;
    a rule is drawn across the whole width."""

    line: int
    spans: tuple[Span, ...] = ()
    prefix: tuple[Span, ...] = ()
    hanging: tuple[Span, ...] = ()
    rule: bool = False


def looks_like_markdown(text: str) -> bool:
    return _MARKDOWN_HINT.search(text) is not None


@dataclass
class _Container:
    """A list item or a quote the lines are inside: what leads its first line and the rest."""

    first: str
    rest: str
    emphasis: Emphasis = Emphasis.NONE
    used: bool = False


@dataclass
class _List:
    ordered: bool
    next_number: int = 1


@dataclass
class _Walk:
    lines: list[MarkdownLine] = field(default_factory=list)
    containers: list[_Container] = field(default_factory=list)
    lists: list[_List] = field(default_factory=list)
    next_line: int = 0

    def prefixes(self) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
        first: list[Span] = []
        hanging: list[Span] = []
        for container in self.containers:
            first.append(
                (container.rest if container.used else container.first, container.emphasis)
            )
            hanging.append((container.rest, container.emphasis))
            container.used = True
        return tuple(first), tuple(hanging)

    def begin_block(self, token: Token) -> int:
        """The source line a block starts on; a gap of blank lines before it becomes one
        blank row."""
        start = token.map[0] if token.map else self.next_line
        if start > self.next_line and self.lines:
            # The gap belongs to the containers already drawn; a quote that starts after it
            # does not reach back over it.
            bars = tuple(
                (container.rest.rstrip(), container.emphasis)
                for container in self.containers
                if container.used and container.rest.strip()
            )
            self.lines.append(MarkdownLine(self.next_line, prefix=bars))
        return start

    def end_block(self, token: Token, last_line: int) -> None:
        self.next_line = token.map[1] if token.map else last_line + 1

    def emit(self, line: int, spans: list[Span], *, rule: bool = False) -> None:
        prefix, hanging = self.prefixes()
        self.lines.append(MarkdownLine(line, tuple(spans), prefix, hanging, rule))


_parsers: list[MarkdownIt] = []


def _parser() -> MarkdownIt:
    # Building a parser costs more than parsing a paragraph; one is kept for the process.
    if not _parsers:
        from markdown_it import MarkdownIt

        _parsers.append(MarkdownIt("commonmark").enable(["strikethrough", "table"]))
    return _parsers[0]


def markdown_lines(text: str) -> list[MarkdownLine]:
    """Parse ``text`` (already stripped of control sequences) into lines to draw."""
    tokens = _parser().parse(text)
    walk = _Walk()
    index = 0
    while index < len(tokens):
        token = tokens[index]
        kind = token.type
        if kind in ("paragraph_open", "heading_open"):
            # A paragraph's or a heading's text is the inline token after its opening.
            index += 1
            _emit_text(walk, token, tokens[index])
        elif kind in ("fence", "code_block"):
            _emit_code(walk, token)
        elif kind == "hr":
            start = walk.begin_block(token)
            walk.emit(start, [], rule=True)
            walk.end_block(token, start)
        elif kind == "table_open":
            index = _emit_table(walk, tokens, index)
        elif kind == "html_block":
            start = walk.begin_block(token)
            body = token.content.removesuffix("\n").split("\n")
            for offset, html in enumerate(body):
                walk.emit(start + offset, [(html, Emphasis.NONE)])
            walk.end_block(token, start + len(body) - 1)
        else:
            _nest(walk, token)
        index += 1
    return walk.lines


def _emit_text(walk: _Walk, opening: Token, inline: Token) -> None:
    base = Emphasis.NONE
    if opening.type == "heading_open":
        base = Emphasis.BOLD | (Emphasis.UNDERLINE if opening.tag == "h1" else Emphasis.NONE)
    start = walk.begin_block(inline)
    last = _emit_inline(walk, inline, start, base)
    walk.end_block(inline, last)


@dataclass
class _TableRow:
    line: int
    cells: list[list[Span]] = field(default_factory=list)
    header: bool = False


def _emit_table(walk: _Walk, tokens: list[Token], index: int) -> int:
    """Lay a table out in aligned columns: the header row bold, a rule under it, the cells
    padded as the delimiter row aligns them. Returns the index of ``table_close``."""
    opening = tokens[index]
    rows: list[_TableRow] = []
    alignments: list[str] = []
    header = False
    while index < len(tokens) and tokens[index].type != "table_close":
        token = tokens[index]
        if token.type in ("thead_open", "thead_close"):
            header = token.type == "thead_open"
        elif token.type == "tr_open":
            line = token.map[0] if token.map else walk.next_line
            rows.append(_TableRow(line, header=header))
        elif token.type in ("th_open", "td_open") and rows:
            style = str(token.attrs.get("style", ""))
            if header:
                alignments.append(style.removeprefix("text-align:"))
            base = Emphasis.BOLD if header else Emphasis.NONE
            index += 1
            rows[-1].cells.append(
                [span for row in _inline_rows(tokens[index], base) for span in row]
            )
        index += 1
    columns = max((len(row.cells) for row in rows), default=0)
    widths = [0] * columns
    for row in rows:
        for column, cell in enumerate(row.cells):
            widths[column] = max(widths[column], line_width(tuple(cell)))
    start = walk.begin_block(opening)
    for row in rows:
        spans: list[Span] = []
        for column in range(columns):
            cell = row.cells[column] if column < len(row.cells) else []
            alignment = alignments[column] if column < len(alignments) else ""
            if column:
                spans.append((CELL_SEPARATOR, Emphasis.DIM))
            spans.extend(_aligned(cell, widths[column], alignment))
        walk.emit(row.line, spans)
        if row.header:
            rule = HEADER_CROSSING.join(RULE_CHARACTER * width for width in widths)
            walk.emit(row.line + 1, [(rule, Emphasis.DIM)])
    last = rows[-1].line if rows else start
    walk.end_block(opening, last)
    return index


def _aligned(cell: list[Span], width: int, alignment: str) -> list[Span]:
    room = width - line_width(tuple(cell))
    if alignment == "right":
        left = room
    elif alignment == "center":
        left = room // 2
    else:
        left = 0
    padded = [(" " * left, Emphasis.NONE)] if left else []
    padded.extend(cell)
    if room - left:
        padded.append((" " * (room - left), Emphasis.NONE))
    return padded


def _emit_code(walk: _Walk, token: Token) -> None:
    start = walk.begin_block(token)
    first = start + 1 if token.type == "fence" else start
    body = token.content.removesuffix("\n").split("\n") if token.content else []
    for offset, code in enumerate(body):
        walk.emit(first + offset, [(CODE_INDENT + code, Emphasis.CODE)])
    if not body:
        walk.emit(first, [])
    walk.end_block(token, first + len(body))


def _nest(walk: _Walk, token: Token) -> None:
    """Enter or leave a list, a list item or a quote; other tokens change nothing."""
    kind = token.type
    if kind in ("bullet_list_open", "ordered_list_open"):
        ordered = kind == "ordered_list_open"
        start_number = int(token.attrs.get("start", 1)) if ordered else 1
        walk.lists.append(_List(ordered, start_number))
    elif kind in ("bullet_list_close", "ordered_list_close"):
        walk.lists.pop()
    elif kind == "list_item_open":
        current = walk.lists[-1] if walk.lists else _List(False)
        marker = BULLET
        if current.ordered:
            number = int(token.info) if token.info.isdigit() else current.next_number
            marker = f"{number}. "
            current.next_number = number + 1
        walk.containers.append(_Container(marker, " " * len(marker)))
    elif kind == "blockquote_open":
        walk.containers.append(_Container(QUOTE_BAR, QUOTE_BAR, Emphasis.DIM))
    elif kind in ("list_item_close", "blockquote_close"):
        walk.containers.pop()


def _emit_inline(walk: _Walk, inline: Token, start: int, base: Emphasis) -> int:
    """Emit the rows of one paragraph or heading, a new row at each line break; returns the
    source line of the last one."""
    rows = _inline_rows(inline, base)
    for offset, spans in enumerate(rows):
        walk.emit(start + offset, spans)
    return start + len(rows) - 1


def _inline_rows(inline: Token, base: Emphasis) -> list[list[Span]]:
    """The pieces of a paragraph, a heading or a table cell, a new row at each line break."""
    rows: list[list[Span]] = []
    spans: list[Span] = []
    emphasis = [base]
    links: list[tuple[str, int]] = []
    for child in inline.children or []:
        kind = child.type
        current = emphasis[-1]
        if kind in ("softbreak", "hardbreak"):
            rows.append(spans)
            spans = []
        elif kind == "code_inline":
            spans.append((child.content, current | Emphasis.CODE))
        elif kind in ("strong_open", "em_open", "s_open", "link_open"):
            added = {
                "strong_open": Emphasis.BOLD,
                "em_open": Emphasis.ITALIC,
                "s_open": Emphasis.STRIKE,
                "link_open": Emphasis.UNDERLINE,
            }[kind]
            emphasis.append(current | added)
            if kind == "link_open":
                links.append((str(child.attrs.get("href", "")), len(spans)))
        elif kind in ("strong_close", "em_close", "s_close", "link_close"):
            if len(emphasis) > 1:
                emphasis.pop()
            if kind == "link_close" and links:
                href, first_span = links.pop()
                shown = "".join(text for text, _ in spans[first_span:])
                if href and href not in (shown, "mailto:" + shown):
                    spans.append((f" ({href})", emphasis[-1]))
        elif kind == "image":
            source = str(child.attrs.get("src", ""))
            spans.append((child.content or "image", current | Emphasis.UNDERLINE))
            if source:
                spans.append((f" ({source})", current))
        elif child.content:
            spans.append((child.content, current))
    rows.append(spans)
    return rows


def line_width(spans: tuple[Span, ...]) -> int:
    from fisk_ai.tui.transcript import cell_width

    return sum(cell_width(text) for text, _ in spans)


def cut_spans(spans: tuple[Span, ...], start: int, end: int) -> list[Span]:
    """The part of ``spans`` between character offsets ``start`` and ``end`` of their text."""
    result: list[Span] = []
    position = 0
    for text, emphasis in spans:
        following = position + len(text)
        if following > start and position < end:
            piece = text[max(start - position, 0) : end - position]
            if piece:
                result.append((piece, emphasis))
        position = following
        if position >= end:
            break
    return result
