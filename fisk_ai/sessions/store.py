"""What every session backend provides and the append rule they share.

The backends are registered in ``fisk_ai.sessions.backends``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Protocol, Self

from fisk_ai.sessions.errors import JournalGapError, JournalLocked
from fisk_ai.sessions.fold import SessionStatus
from fisk_ai.sessions.records import Meta, Payload, Record

__all__ = [
    "AppendAction",
    "Journal",
    "SessionStore",
    "SessionStoreFactory",
    "SessionSummary",
    "check_append",
    "check_claim",
]


class AppendAction(enum.Enum):
    SKIP = "skip"
    WRITE = "write"


def check_append(last_seq: int, seq: int) -> AppendAction:
    """The append rule both backends share: a record at or below the last sequence is a
    duplicate to skip, the next one is written, and one further ahead is a gap.

    It deliberately advances nothing. The caller advances its last sequence only once the record
    is durable, so a write that tears is appended again under the same sequence, not lost.
    """
    if seq <= last_seq:
        return AppendAction.SKIP
    if seq == last_seq + 1:
        return AppendAction.WRITE
    raise JournalGapError(
        f"record {seq} cannot follow record {last_seq}: the records between them are missing"
    )


def check_claim(run_id: str, read_seq: int | None, last_seq: int) -> None:
    """The claim rule both backends share: a writer that read the journal up to record
    ``read_seq`` may take it only while record ``last_seq`` is still the last. Anything written
    since means another run of the conversation took it first, and this one must stop before
    it runs anything; JournalLocked says so."""
    if read_seq is None or read_seq == last_seq:
        return
    raise JournalLocked(
        f"session {run_id} was taken by another run after this one read it (it ends at record "
        f"{last_seq}, not {read_seq}), so this run stopped before anything ran; let that run "
        "end, then resume the session again"
    )


@dataclass(frozen=True)
class SessionSummary:
    """One row of a session listing. ``problem`` says why a ``corrupt`` session cannot be read;
    ``between_turns`` marks a suspended session whose last turn was answered (the file store
    says so; the JetStream store, which reads no more than the ends of a journal, does not)."""

    run_id: str
    status: SessionStatus
    model: str
    updated: datetime
    first_prompt: str
    problem: str = ""
    between_turns: bool = False


class Journal(Protocol):
    """One session held open for writing. Holding it excludes every other writer."""

    @property
    def run_id(self) -> str: ...

    @property
    def last_seq(self) -> int: ...

    async def append(self, payload: Payload, *, optional: bool = False) -> Record:
        """Write ``payload`` as the next record; the last sequence advances only once it is
        durable. A memory_revisions record is always written optional."""
        ...

    async def append_record(self, record: Record) -> AppendAction:
        """Write a record that already has its sequence, by the check_append rule."""
        ...

    async def close(self) -> None:
        """Release the session; closing twice is harmless."""
        ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


class SessionStore(Protocol):
    async def create(self, run_id: str, meta: Meta) -> Journal:
        """Start a new journal with ``meta`` as record 1, held open for writing."""
        ...

    async def open(self, run_id: str, *, read_seq: int | None = None) -> Journal:
        """Take an existing journal for writing; JournalLocked when another process has it.

        ``read_seq`` is the last record of the journal as the caller read it: the journal is
        then taken only if nothing was written after that record, checked by the backend's own
        exclusion (the file lock; the JetStream publish conditioned on that record), so of two
        runs that read the same journal exactly one gets it (``check_claim``)."""
        ...

    async def read(self, run_id: str) -> list[Record]:
        """Every record of a journal, in order; it need not be held open to be read."""
        ...

    async def exists(self, run_id: str) -> bool:
        """Whether a journal of that id is stored, without reading it."""
        ...

    async def list(self) -> list[SessionSummary]:
        """Every stored session, most recently updated first."""
        ...

    async def remove(self, run_id: str) -> None: ...

    def describe(self) -> str:
        """Where this store keeps sessions, in a phrase for ``fisk info``."""
        ...


SessionStoreFactory = Callable[..., SessionStore]
