"""The model's prose as styled lines: markdown parsed once, wrapped to any width later.

Parsing is width-independent and happens once per block; wrapping the result to a width is as
cheap as wrapping plain text, so a resize re-wraps without parsing again. The text is parsed as
markdown only, never as Rich or Textual markup: every piece comes out as plain text with an
emphasis flag beside it.

A line break the model wrote stays a line break (a soft break is not joined into the line
before it), so each source line starts a row of its own and a search hit on a source line can
be shown on the rows it became.

A table is kept as its cells rather than as laid-out rows, since fitting its columns depends on
the width. A fenced code block that names a language Pygments knows is split into its tokens,
each marked with the kind of token it is; the tokens are plain text like everything else.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from pygments.token import _TokenType  # type: ignore[import-untyped]

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
    KEYWORD = enum.auto()
    STRING = enum.auto()
    NUMBER = enum.auto()
    COMMENT = enum.auto()
    DEFINITION = enum.auto()
    """The name a ``def`` or a ``class`` introduces, or a decorator."""
    BUILTIN = enum.auto()


SYNTAX = (
    Emphasis.KEYWORD
    | Emphasis.STRING
    | Emphasis.NUMBER
    | Emphasis.COMMENT
    | Emphasis.DEFINITION
    | Emphasis.BUILTIN
)
"""The token kinds of a highlighted code block."""

Span = tuple[str, Emphasis]


class Alignment(enum.StrEnum):
    LEFT = "left"
    RIGHT = "right"
    CENTER = "center"


_ALIGNMENTS = {alignment.value: alignment for alignment in Alignment}


@dataclass(frozen=True, slots=True)
class TableRow:
    """One row of a table: its source line and the pieces of each of its cells."""

    line: int
    cells: tuple[tuple[Span, ...], ...]
    header: bool = False


@dataclass(frozen=True, slots=True)
class Table:
    """A table's cells and each column's alignment, laid out only once a width is known."""

    rows: tuple[TableRow, ...]
    alignments: tuple[Alignment, ...]

    @property
    def columns(self) -> int:
        return max((len(row.cells) for row in self.rows), default=0)


@dataclass(frozen=True, slots=True)
class MarkdownLine:
    """One source line as drawn: ``prefix`` leads its first row (a bullet, a quote bar),
    ``hanging`` leads the rows it wraps onto. ``line`` counts from the first line of the text;
    a rule is drawn across the whole width; a ``table`` is laid out in its place."""

    line: int
    spans: tuple[Span, ...] = ()
    prefix: tuple[Span, ...] = ()
    hanging: tuple[Span, ...] = ()
    rule: bool = False
    table: Table | None = None


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

    def emit(
        self,
        line: int,
        spans: list[Span],
        *,
        rule: bool = False,
        indent: str = "",
        table: Table | None = None,
    ) -> None:
        """Add a line; ``indent`` leads its first row and every row it wraps onto, inside
        the containers' own prefixes."""
        prefix, hanging = self.prefixes()
        if indent:
            prefix = (*prefix, (indent, Emphasis.NONE))
            hanging = (*hanging, (indent, Emphasis.NONE))
        self.lines.append(MarkdownLine(line, tuple(spans), prefix, hanging, rule, table))


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


def _emit_table(walk: _Walk, tokens: list[Token], index: int) -> int:
    """Keep a table's cells, the header's bold, and the alignment its delimiter row gives
    each column, for the layout to fit to a width. Returns the index of ``table_close``."""
    opening = tokens[index]
    rows: list[TableRow] = []
    cells: list[tuple[Span, ...]] = []
    alignments: list[Alignment] = []
    header = False
    line = walk.next_line
    while index < len(tokens) and tokens[index].type != "table_close":
        token = tokens[index]
        if token.type in ("thead_open", "thead_close"):
            header = token.type == "thead_open"
        elif token.type == "tr_open":
            line = token.map[0] if token.map else walk.next_line
            cells = []
        elif token.type == "tr_close":
            rows.append(TableRow(line, tuple(cells), header))
        elif token.type in ("th_open", "td_open"):
            if header:
                style = str(token.attrs.get("style", "")).removeprefix("text-align:")
                alignments.append(_ALIGNMENTS.get(style, Alignment.LEFT))
            base = Emphasis.BOLD if header else Emphasis.NONE
            index += 1
            cells.append(tuple(span for row in _inline_rows(tokens[index], base) for span in row))
        index += 1
    start = walk.begin_block(opening)
    walk.emit(rows[0].line if rows else start, [], table=Table(tuple(rows), tuple(alignments)))
    walk.end_block(opening, rows[-1].line if rows else start)
    return index


def _emit_code(walk: _Walk, token: Token) -> None:
    """A code block indented, its wrapped rows too; a fence that names a language Pygments
    knows is colored by token."""
    start = walk.begin_block(token)
    first = start + 1 if token.type == "fence" else start
    body = token.content.removesuffix("\n").split("\n") if token.content else []
    language = token.info.split(maxsplit=1)[0] if token.info.strip() else ""
    highlighted = code_spans(body, language)
    for offset, code in enumerate(body):
        spans = highlighted[offset] if highlighted else [(code, Emphasis.CODE)]
        walk.emit(first + offset, spans, indent=CODE_INDENT)
    if not body:
        walk.emit(first, [])
    walk.end_block(token, first + len(body))


def code_spans(lines: list[str], language: str) -> list[list[Span]] | None:
    """``lines`` of code in ``language`` as pieces marked with their kind of token (a piece of
    no kind colored here is marked with nothing), a list per line; None when the language is
    unnamed or unknown, or when the lexer would not give the text back exactly as written."""
    if not language or not lines:
        return None
    from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
    from pygments.util import ClassNotFound  # type: ignore[import-untyped]

    try:
        lexer = get_lexer_by_name(language.lower(), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    rows: list[list[Span]] = [[]]
    for kind, value in lexer.get_tokens("\n".join(lines)):
        # A colored block is drawn in the text's own color where a token has none of its
        # own; the code color is for code whose tokens are not known.
        emphasis = _token_emphasis(kind)
        for number, piece in enumerate(value.split("\n")):
            if number:
                rows.append([])
            if not piece:
                continue
            row = rows[-1]
            if row and row[-1][1] == emphasis:
                row[-1] = (row[-1][0] + piece, emphasis)
            else:
                row.append((piece, emphasis))
    if ["".join(text for text, _ in row) for row in rows] != lines:
        return None
    return rows


def _token_emphasis(kind: _TokenType) -> Emphasis:
    from pygments import token  # type: ignore[import-untyped]

    if kind in token.Comment:
        return Emphasis.COMMENT
    if kind in token.String:
        return Emphasis.STRING
    if kind in token.Number:
        return Emphasis.NUMBER
    if kind in token.Keyword or kind in token.Operator.Word:
        return Emphasis.KEYWORD
    if kind in token.Name.Function or kind in token.Name.Class or kind in token.Name.Decorator:
        return Emphasis.DEFINITION
    if kind in token.Name.Builtin:
        return Emphasis.BUILTIN
    return Emphasis.NONE


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
