"""`fisk knowledge` output as lines: search hits, a chunk, sources, stats, doctor, matches.

Everything printed from the corpus (paths, headings, bodies) is stripped of terminal control
first: a document is untrusted text.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TextIO

from fisk_ai.util.sanitize import single_line, strip_control

if TYPE_CHECKING:
    from fisk_ai.knowledge.doctor import Check
    from fisk_ai.knowledge.search import (
        EnumerateAnswer,
        Hit,
        MatchedDocument,
        SearchAnswer,
        Source,
        Word,
    )

__all__ = [
    "ProgressLine",
    "chunk_text",
    "doctor_lines",
    "explain_lines",
    "match_lines",
    "search_lines",
    "source_lines",
    "table",
    "word_lines",
]

_PREVIEW_LINES = 4


def table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return (
        "\n".join(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in rows
        )
        + "\n"
    )


def search_lines(answer: SearchAnswer, *, full: bool) -> str:
    from fisk_ai.knowledge.search import score_text

    lines: list[str] = []
    for number, hit in enumerate(answer.hits, 1):
        section = f"  [{single_line(hit.heading_path)}]" if hit.heading_path else ""
        score = score_text(answer, hit)
        lines.append(f"{number}. {single_line(hit.citation)}  {score}{section}")
        body = strip_control(hit.body).splitlines()
        if not full and len(body) > _PREVIEW_LINES:
            body = [*body[:_PREVIEW_LINES], "..."]
        lines += [f"   {line}" for line in body]
        lines.append("")
    return "\n".join(lines)


def chunk_text(hit: Hit, total: int) -> str:
    lines = [f"{single_line(hit.citation)} (chunk {hit.ordinal + 1} of {total})"]
    if hit.heading_path:
        lines.append(f"Section: {single_line(hit.heading_path)}")
    lines += ["", strip_control(hit.body)]
    return "\n".join(lines) + "\n"


# An mtime past this is nanoseconds, as this project stored it before it stored Go's seconds;
# as seconds it would be a date after the year 5000.
_NANOSECOND_MTIMES = 10**11


def source_lines(found: Sequence[Source]) -> str:
    rows = [("PATH", "CHUNKS", "MODIFIED", "TITLE")]
    for source in found:
        seconds = source.mtime
        if seconds > _NANOSECOND_MTIMES:
            seconds //= 1_000_000_000
        modified = datetime.fromtimestamp(seconds, tz=UTC).astimezone()
        rows.append(
            (
                single_line(source.path),
                str(source.chunks),
                modified.strftime("%Y-%m-%d %H:%M"),
                single_line(source.title, 50),
            )
        )
    return table(rows)


def word_lines(words: Sequence[Word], *, words_only: bool) -> str:
    if words_only:
        return "".join(f"{single_line(word.word)}\n" for word in words)
    rows = [("WORD", "STEM", "DOCUMENTS", "CHUNKS")]
    rows += [
        (single_line(word.word), single_line(word.stem), str(word.documents), str(word.chunks))
        for word in words
    ]
    return table(rows)


def match_lines(documents: Sequence[MatchedDocument], *, paths_only: bool) -> str:
    if paths_only:
        return "".join(f"{single_line(document.path)}\n" for document in documents)
    rows = [("CITATION", "BODY", "HEADING", "CHUNKS")]
    rows += [
        (
            single_line(document.citation),
            str(document.body_matches),
            str(document.heading_matches),
            str(document.total_chunks),
        )
        for document in documents
    ]
    return table(rows)


def explain_lines(answer: EnumerateAnswer) -> str:
    """What `match --explain` adds: the expression that ran and, for each term, how many
    documents hold it as written and in any form."""
    rows = [("WORD", "AS WRITTEN", "ANY FORM", "ALSO MATCHES")]
    for report in answer.terms:
        if report.not_queried:
            rows.append((single_line(report.term), "-", "-", f"not queried: {report.not_queried}"))
            continue
        rows.append(
            (
                single_line(report.term),
                str(report.as_written),
                str(report.documents),
                ", ".join(report.related_forms),
            )
        )
    compiled = answer.query.compiled() or "(nothing was queried)"
    return f"\ncompiled: {single_line(compiled)}\n" + table(rows)


def doctor_lines(checks: Sequence[Check]) -> str:
    return "".join(
        f"{check.state.value:<5} {check.name}: {single_line(check.detail)}\n" for check in checks
    )


class ProgressLine:
    """One line rewritten in place on a terminal while files are indexed; nothing when the
    stream is not a terminal, so a pipe or a log gets only the final line."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._live = self._stream.isatty()
        self._width = 0

    def __call__(self, done: int, total: int, path: str) -> None:
        if not self._live:
            return
        text = f"indexing [{done}/{total}] {single_line(path, 60)}"
        self._stream.write("\r" + text.ljust(self._width))
        self._width = len(text)
        self._stream.flush()

    def clear(self) -> None:
        if self._live and self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
