"""The file store's session index: one listing row per journal, kept in ``.index.json`` beside
the journals so a listing reads one small file and a ``stat`` per journal instead of every
journal.

The index is a cache, never the truth. Each row carries the size and modification time (in
nanoseconds) its journal had when it was summarised; a listing stats every journal and
re-summarises any whose size or time differ, or that has no row, and drops rows whose journal is
gone. A journal appended by this build, an older build that knows nothing of the index, or
another process is therefore re-read at the next listing, never shown stale: a journal only
grows, so an append always changes its size.

The file is replaced atomically (a private temporary file renamed over it), so a reader sees the
old index or the new one, never half of either. Two processes writing at once each write a whole
index; whichever lands last wins, and a row it lacks or holds stale is re-summarised next time.
An index that cannot be read (missing, cut short, another version) is rebuilt from the journals.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from fisk_ai.errors import BoundedInputError
from fisk_ai.sessions.fold import SessionStatus
from fisk_ai.sessions.store import SessionSummary
from fisk_ai.util import bounded

__all__ = ["INDEX_NAME", "JournalStat", "SessionIndex"]

INDEX_NAME = ".index.json"
"""Starts with a dot, so it can never be taken for a journal ``<id>.json``."""
INDEX_VERSION = 2
"""Raised whenever a row's meaning changes, so an index of another build is rebuilt."""
_FILE_MODE = 0o600
MAX_INDEX_BYTES = 64 * 1024 * 1024
"""Rows are a few hundred bytes each: this is room for about 100,000 sessions."""
_ROW_FIELDS = 8
_STATUS_OF_VALUE = {status.value: status for status in SessionStatus}
"""A dict look-up costs a fraction of calling the enum, once per row of thousands."""


@dataclass(frozen=True)
class JournalStat:
    """What a journal looked like on disk when it was (or is about to be) summarised."""

    run_id: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class _Row:
    size: int
    mtime_ns: int
    summary: SessionSummary


class SessionIndex:
    """The index file of one session directory."""

    def __init__(self, directory: Path) -> None:
        self._path = directory / INDEX_NAME

    @property
    def path(self) -> Path:
        return self._path

    def listing(
        self, journals: Iterable[JournalStat], summarize: Callable[[str], SessionSummary]
    ) -> list[SessionSummary]:
        """The summary of every journal in ``journals``, taken from the index where the journal
        is as it was indexed and from ``summarize`` otherwise; the index is rewritten when any
        row changed."""
        known = self._load()
        rows: dict[str, _Row] = {}
        changed = False
        for journal in journals:
            row = known.get(journal.run_id)
            if row is None or (row.size, row.mtime_ns) != (journal.size, journal.mtime_ns):
                row = _Row(journal.size, journal.mtime_ns, summarize(journal.run_id))
                changed = True
            rows[journal.run_id] = row
        if changed or rows.keys() != known.keys():
            self._save(rows)
        return [row.summary for row in rows.values()]

    def forget(self, run_id: str) -> None:
        """Drop the row of a removed journal."""
        rows = self._load()
        if rows.pop(run_id, None) is not None:
            self._save(rows)

    def _load(self) -> dict[str, _Row]:
        try:
            # Like the journals, a symlink in the index's place is not followed, and anything
            # but a regular file (a FIFO would block the open and the read) is not read.
            fd = os.open(self._path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return {}
                with os.fdopen(fd, "rb", closefd=False) as index_file:
                    data = index_file.read(MAX_INDEX_BYTES + 1)
            finally:
                os.close(fd)
            # A hostile or damaged index (deep, huge, out-of-range numbers) is rebuilt like any
            # other unreadable one.
            document = bounded.loads_json(
                data, what=f"the session index {self._path}", max_bytes=MAX_INDEX_BYTES
            )
        except (OSError, BoundedInputError):
            return {}
        if not isinstance(document, dict) or document.get("version") != INDEX_VERSION:
            return {}
        entries = document.get("sessions")
        if not isinstance(entries, dict):
            return {}
        rows: dict[str, _Row] = {}
        for run_id, entry in entries.items():
            # A row of the wrong shape is left out, so its journal is read again.
            try:
                rows[run_id] = _row_from_json(run_id, entry)
            except (TypeError, ValueError, KeyError):
                continue
        return rows

    def _save(self, rows: Mapping[str, _Row]) -> None:
        document = {
            "version": INDEX_VERSION,
            "sessions": {run_id: _row_to_json(row) for run_id, row in rows.items()},
        }
        # ASCII, so a lone surrogate a journal held is kept as its escape rather than refused.
        data = json.dumps(document, separators=(",", ":")).encode()
        temporary = self._path.with_name(f"{INDEX_NAME}.{os.getpid()}.{os.urandom(4).hex()}")
        # The index only saves reading: a directory that refuses it leaves listings correct.
        with contextlib.suppress(OSError):
            fd = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                _FILE_MODE,
            )
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            try:
                temporary.replace(self._path)
            finally:
                temporary.unlink(missing_ok=True)


def _row_to_json(row: _Row) -> list[object]:
    """A row as a JSON array, the fields in ``_row_from_json``'s order: the index of thousands
    of sessions is read on every listing, and arrays parse faster than objects."""
    summary = row.summary
    return [
        row.size,
        row.mtime_ns,
        summary.status.value,
        summary.model,
        summary.updated.isoformat(),
        summary.first_prompt,
        summary.problem,
        summary.between_turns,
    ]


def _row_from_json(run_id: str, entry: object) -> _Row:
    if not isinstance(entry, list) or len(entry) != _ROW_FIELDS:
        raise TypeError("an index row of the wrong shape")
    size, mtime_ns, status, model, updated, first_prompt, problem, between_turns = entry
    if not (
        isinstance(size, int)
        and isinstance(mtime_ns, int)
        and isinstance(updated, str)
        and isinstance(model, str)
        and isinstance(first_prompt, str)
        and isinstance(problem, str)
        and isinstance(between_turns, bool)
    ):
        raise TypeError("an index row of the wrong shape")
    summary = SessionSummary(
        run_id=run_id,
        status=_STATUS_OF_VALUE[status],
        model=model,
        updated=datetime.fromisoformat(updated),
        first_prompt=first_prompt,
        problem=problem,
        between_turns=between_turns,
    )
    return _Row(size, mtime_ns, summary)
