"""The file backend: one JSON-lines journal per session, ``<directory>/<id>.json``.

Each record is one line, appended with O_APPEND and fsynced before the journal's last sequence
advances; the directory is fsynced once, when a journal is created, so the new name survives a
crash too. An append writes on the event loop while the disk syncs quickly, because handing a
sub-millisecond fsync to a thread costs more than the fsync itself; once one takes longer than
``INLINE_SYNC_LIMIT`` the next append goes to a thread, and stays there until a sync is quick
again, so a disk that turns slow stalls the loop for one append rather than for every one
(docs/sessions.md, "Durability and speed").

Beside each journal, ``<id>.lock`` carries an exclusive flock for as long as a writer
holds the session; the kernel drops it when the process dies, so a crash leaves no stale lock.
``<id>.lease`` is a second, longer hold: a workstation keeps a shared flock on it for as long as
it has the conversation open, between turns too, and names itself in it. Writers never look at
it; only ``remove`` does, and refuses a leased session with the holder's name.

Because the file is only appended to and every line is synced, an unparsable line can only be
the last one, cut short by a crash: that line is dropped (and cut off when the journal is next
opened for writing). An unparsable line anywhere else is corruption and is refused.

``.index.json`` holds a listing row per journal, checked against each journal's size and
modification time, so ``list`` reads only the journals that changed (fisk_ai/sessions/index.py).

Journals are 0600 and their directory 0700, created so and re-asserted on open; a symlink at the
directory, a journal or a lock is refused rather than followed.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import errno
import fcntl
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self, TypeVar

from fisk_ai.sessions.errors import (
    InvalidSessionId,
    JournalError,
    JournalLocked,
    SessionError,
    SessionExists,
    SessionNotFound,
)
from fisk_ai.sessions.fold import SessionStatus, fold
from fisk_ai.sessions.index import JournalStat, SessionIndex
from fisk_ai.sessions.records import (
    MemoryRevisions,
    Meta,
    Payload,
    Record,
    Unrecognized,
    encode_record,
    read_record_json,
    record_from_json,
)
from fisk_ai.sessions.store import (
    AppendAction,
    SessionSummary,
    check_append,
    check_claim,
)
from fisk_ai.util import jsonx
from fisk_ai.util.fsx import make_private_directories

__all__ = [
    "MAX_SESSION_ID_LENGTH",
    "FileJournal",
    "FileSessionStore",
    "default_state_directory",
    "validate_session_id",
]

MAX_SESSION_ID_LENGTH = 128
_SESSION_ID = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_-]*")
_FILE_MODE = 0o600
_DIRECTORY_MODE = 0o700
_JOURNAL_SUFFIX = ".json"
_LOCK_SUFFIX = ".lock"
_LEASE_SUFFIX = ".lease"

_Result = TypeVar("_Result")


def default_state_directory() -> Path:
    """Where journals go by default: ``$XDG_STATE_HOME/fisk-ai/runs``, else
    ``~/.local/state/fisk-ai/runs``. The XDG layout is used on every platform, as the user guide
    documents it, rather than each platform's native application folder."""
    from platformdirs.unix import Unix

    return Unix("fisk-ai").user_state_path / "runs"


def validate_session_id(run_id: str) -> str:
    """Return ``run_id`` if it can name a session; raise InvalidSessionId if not."""
    if len(run_id) > MAX_SESSION_ID_LENGTH or not _SESSION_ID.fullmatch(run_id):
        raise InvalidSessionId(
            f"{run_id[:MAX_SESSION_ID_LENGTH]!r} is not a valid session id; use up to "
            f"{MAX_SESSION_ID_LENGTH} letters, digits, '_' and '-', starting with a letter or digit"
        )
    return run_id


class FileSessionStore:
    """Sessions as JSON-lines journals in one directory."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._directory = Path(directory)

    @property
    def directory(self) -> Path:
        return self._directory

    def describe(self) -> str:
        return f"file, in {self._directory}"

    async def create(self, run_id: str, meta: Meta) -> FileJournal:
        validate_session_id(run_id)
        if meta.run_id != run_id:
            raise ValueError(f"the meta record names run {meta.run_id}, not {run_id}")
        return await self._in_thread(self._create, run_id, meta)

    async def open(self, run_id: str, *, read_seq: int | None = None) -> FileJournal:
        validate_session_id(run_id)
        return await self._in_thread(self._open, run_id, read_seq)

    async def read(self, run_id: str) -> list[Record]:
        validate_session_id(run_id)
        return await self._in_thread(self._read, run_id)

    async def exists(self, run_id: str) -> bool:
        validate_session_id(run_id)
        return await self._in_thread(self._exists, run_id)

    async def list(self) -> list[SessionSummary]:
        return await self._in_thread(self._list)

    async def remove(self, run_id: str) -> None:
        validate_session_id(run_id)
        await self._in_thread(self._remove, run_id)

    async def _in_thread(self, work: Callable[..., _Result], *arguments: object) -> _Result:
        try:
            return await asyncio.to_thread(work, *arguments)
        except OSError as failure:
            # Expected failures are already SessionErrors; this is the disk or the system.
            where = failure.filename or self._directory
            raise SessionError(f"the session store failed at {where}: {failure.strerror}") from None

    def _journal_path(self, run_id: str) -> Path:
        return self._directory / (run_id + _JOURNAL_SUFFIX)

    def _lock_path(self, run_id: str) -> Path:
        return self._directory / (run_id + _LOCK_SUFFIX)

    def _lease_path(self, run_id: str) -> Path:
        return self._directory / (run_id + _LEASE_SUFFIX)

    def lease(self, run_id: str, holder: str) -> SessionLease:
        """Hold session ``run_id`` open for ``holder`` (who to name when a removal is refused)
        until the lease is released or the process ends. One open and one flock, so it is
        taken on the caller's thread."""
        validate_session_id(run_id)
        self._prepare_directory()
        fd = _open_file(self._lease_path(run_id), os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.encode(), 0)
        except BlockingIOError:
            os.close(fd)
            raise JournalLocked(f"session {run_id} is being removed") from None
        except BaseException:
            os.close(fd)
            raise
        return SessionLease(run_id, fd)

    def _refuse_leased(self, run_id: str) -> int:
        """Take the lease exclusively for a removal; a held one refuses it, naming the holder."""
        fd = _open_file(self._lease_path(run_id), os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise JournalLocked(
                f"session {run_id} is open in {holder}; leave that run (Ctrl-D) or start a new "
                "conversation there with /clear, then remove it"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _create(self, run_id: str, meta: Meta) -> FileJournal:
        self._prepare_directory()
        path = self._journal_path(run_id)
        line = encode_record(Record(1, meta)) + b"\n"
        lock_fd = self._lock(run_id)
        journal_fd = -1
        try:
            _refuse_symlink(path)
            try:
                journal_fd = _open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                raise SessionExists(
                    f"session {run_id} already exists in {self._directory}; choose another "
                    f"name or remove it with fisk session rm {run_id}"
                ) from None
            try:
                _write_all(journal_fd, line)
                os.fsync(journal_fd)
                _fsync_directory(self._directory)
            except OSError as failure:
                # Leave no half-made journal behind to block the next attempt at this id.
                os.close(journal_fd)
                journal_fd = -1
                path.unlink(missing_ok=True)
                raise SessionError(
                    f"could not write session journal {path}: {failure.strerror}"
                ) from None
        except BaseException:
            if journal_fd >= 0:
                os.close(journal_fd)
            os.close(lock_fd)
            raise
        return FileJournal(run_id, path, journal_fd, lock_fd, last_seq=1, size=len(line))

    def _open(self, run_id: str, read_seq: int | None) -> FileJournal:
        self._check_directory(run_id)
        self._prepare_directory()
        path = self._journal_path(run_id)
        journal_fd = self._open_journal(run_id, os.O_RDWR | os.O_APPEND)
        lock_fd = -1
        try:
            lock_fd = self._lock(run_id)
            data = _read_all(journal_fd)
            parsed = _parse_journal(data, path)
            size = parsed.good_length
            if size < len(data):
                os.ftruncate(journal_fd, size)
            if parsed.unterminated:
                # The last record is whole but its newline was cut: finish the line so the next
                # record starts on its own.
                _write_all(journal_fd, b"\n")
                size += 1
            if size != len(data):
                os.fsync(journal_fd)
            if not parsed.records:
                raise JournalError(
                    f"session journal {path} holds no records; remove it with "
                    f"fisk session rm {run_id}"
                )
            # Under the lock, so no other writer can append between this check and our claim.
            check_claim(run_id, read_seq, parsed.records[-1].seq)
        except BaseException:
            if lock_fd >= 0:
                os.close(lock_fd)
            os.close(journal_fd)
            raise
        last_seq = parsed.records[-1].seq
        return FileJournal(run_id, path, journal_fd, lock_fd, last_seq=last_seq, size=size)

    def _exists(self, run_id: str) -> bool:
        return self._directory_info() is not None and self._journal_path(run_id).is_file()

    def _read(self, run_id: str) -> builtins.list[Record]:
        self._check_directory(run_id)
        journal_fd = self._open_journal(run_id, os.O_RDONLY)
        try:
            data = _read_all(journal_fd)
        finally:
            os.close(journal_fd)
        return _parse_journal(data, self._journal_path(run_id)).records

    def _list(self) -> builtins.list[SessionSummary]:
        try:
            self._check_directory("")
        except SessionNotFound:
            return []
        # Rows come from the index beside the journals; a journal it did not see as it is now
        # is read and summarised again (fisk_ai/sessions/index.py).
        summaries = SessionIndex(self._directory).listing(self._stored_journals(), self._summarize)
        summaries.sort(key=lambda summary: summary.run_id)
        summaries.sort(key=lambda summary: summary.updated, reverse=True)
        return summaries

    def _stored_journals(self) -> Iterator[JournalStat]:
        with os.scandir(self._directory) as entries:
            for entry in entries:
                run_id = entry.name.removesuffix(_JOURNAL_SUFFIX)
                if not (entry.name.endswith(_JOURNAL_SUFFIX) and _is_session_id(run_id)):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # removed while the listing ran
                yield JournalStat(run_id, info.st_size, info.st_mtime_ns)

    def _summarize(self, run_id: str) -> SessionSummary:
        path = self._journal_path(run_id)
        try:
            updated = datetime.fromtimestamp(path.lstat().st_mtime, UTC)
        except OSError:
            updated = datetime.fromtimestamp(0, UTC)
        records: builtins.list[Record] = []
        try:
            records = self._read(run_id)
            conversation = fold(records)
        except (SessionError, OSError) as failure:
            meta = records[0].payload if records else None
            return SessionSummary(
                run_id=run_id,
                status=SessionStatus.CORRUPT,
                model=meta.fingerprint.model if isinstance(meta, Meta) else "",
                updated=updated,
                first_prompt=meta.prompt if isinstance(meta, Meta) else "",
                problem=str(failure),
            )
        return SessionSummary(
            run_id=run_id,
            status=conversation.status,
            model=conversation.meta.fingerprint.model,
            updated=updated,
            first_prompt=conversation.first_prompt,
            between_turns=conversation.between_turns,
        )

    def _remove(self, run_id: str) -> None:
        self._check_directory(run_id)
        path = self._journal_path(run_id)
        _refuse_symlink(path)
        if not path.exists():
            raise self._not_found(run_id)
        lease_fd = self._refuse_leased(run_id)
        try:
            lock_fd = self._lock(run_id)
            try:
                path.unlink()
                self._lock_path(run_id).unlink(missing_ok=True)
                self._lease_path(run_id).unlink(missing_ok=True)
                _fsync_directory(self._directory)
                SessionIndex(self._directory).forget(run_id)
            finally:
                os.close(lock_fd)
        finally:
            os.close(lease_fd)

    def _prepare_directory(self) -> None:
        """Make the directory if needed, and hold it to 0700 and to being a real directory."""
        try:
            make_private_directories(self._directory)
        except FileExistsError:
            pass  # something that is not a directory; the check below names it
        except OSError as failure:
            raise SessionError(
                f"cannot create the session directory {self._directory}: {failure.strerror}"
            ) from None
        info = self._directory_info()
        if info is None:
            raise SessionError(f"the session directory {self._directory} vanished")
        if stat.S_IMODE(info.st_mode) != _DIRECTORY_MODE:
            try:
                self._directory.chmod(_DIRECTORY_MODE)
            except OSError as failure:
                raise SessionError(
                    f"cannot restrict the session directory {self._directory} to mode 0700: "
                    f"{failure.strerror}"
                ) from None

    def _check_directory(self, run_id: str) -> None:
        if self._directory_info() is None:
            raise self._not_found(run_id)

    def _directory_info(self) -> os.stat_result | None:
        try:
            info = self._directory.lstat()
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise SessionError(
                f"the session directory {self._directory} is a symlink, which is refused; "
                "point the configuration at the real directory"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise SessionError(f"the session directory {self._directory} is not a directory")
        return info

    def _open_journal(self, run_id: str, flags: int) -> int:
        try:
            return _open_file(self._journal_path(run_id), flags)
        except FileNotFoundError:
            raise self._not_found(run_id) from None

    def _lock(self, run_id: str) -> int:
        lock_fd = _open_file(self._lock_path(run_id), os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            raise JournalLocked(
                f"session {run_id} is in use by another fisk process; wait for that run to "
                "end, or stop it, and try again"
            ) from None
        except BaseException:
            os.close(lock_fd)
            raise
        return lock_fd

    def _not_found(self, run_id: str) -> SessionNotFound:
        return SessionNotFound(
            f"there is no session {run_id} in {self._directory}; fisk session ls lists the "
            "sessions kept there"
        )


class SessionLease:
    """A workstation's hold on the conversation it has open; ``release`` lets it go."""

    def __init__(self, run_id: str, fd: int) -> None:
        self.run_id = run_id
        self._fd = fd

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


INLINE_SYNC_LIMIT = 0.001
"""Seconds a write + fsync may take and still be done on the event loop next time."""


class FileJournal:
    """One session held open for appending, under its flock until closed."""

    def __init__(
        self, run_id: str, path: Path, journal_fd: int, lock_fd: int, *, last_seq: int, size: int
    ) -> None:
        self._run_id = run_id
        self._path = path
        self._journal_fd = journal_fd
        self._lock_fd = lock_fd
        self._last_seq = last_seq
        self._size = size
        self._closed = False
        self._broken = False
        self._sync_inline = True
        self._mutex = asyncio.Lock()

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def path(self) -> Path:
        return self._path

    @property
    def last_seq(self) -> int:
        return self._last_seq

    async def append(self, payload: Payload, *, optional: bool = False) -> Record:
        async with self._mutex:
            optional = optional or isinstance(payload, MemoryRevisions | Unrecognized)
            record = Record(self._last_seq + 1, payload, optional)
            await self._write(encode_record(record) + b"\n", record.seq)
            return record

    async def append_record(self, record: Record) -> AppendAction:
        async with self._mutex:
            action = check_append(self._last_seq, record.seq)
            if action is AppendAction.WRITE:
                await self._write(encode_record(record) + b"\n", record.seq)
            return action

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        os.close(self._journal_fd)
        os.close(self._lock_fd)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def _write(self, line: bytes, seq: int) -> None:
        """Append record ``seq``, written as ``line``; once it is durable the last sequence is
        ``seq``. A cancel arriving while a thread writes it waits for that write and then goes
        on: the thread writes whatever the cancel says, so going at once would free the journal
        for another append, or its close, in the middle of the line, and leave the count of
        records one short of the file."""
        if self._sync_inline:
            seconds = self._write_synced(line)
        else:
            writing = asyncio.ensure_future(asyncio.to_thread(self._write_synced, line))
            cancelled = False
            while not writing.done():
                try:
                    await asyncio.wait({writing})
                except asyncio.CancelledError:
                    cancelled = True
            if cancelled:
                if writing.exception() is None:
                    self._last_seq = seq
                raise asyncio.CancelledError
            seconds = writing.result()
        self._last_seq = seq
        self._sync_inline = seconds <= INLINE_SYNC_LIMIT

    def _write_synced(self, line: bytes) -> float:
        """Append ``line`` and fsync it; return the seconds that took."""
        if self._closed:
            raise SessionError(f"session {self._run_id} was closed; open it again to append")
        if self._broken:
            raise SessionError(
                f"session {self._run_id} stopped taking records after a failed write; "
                "resume it to continue"
            )
        started = time.perf_counter()
        try:
            _write_all(self._journal_fd, line)
            os.fsync(self._journal_fd)
        except OSError as failure:
            # Whatever part of the line landed is cut off again, so the journal keeps ending on
            # a whole record; after a failed fsync the file's state is unknown, so stop here.
            self._broken = True
            with contextlib.suppress(OSError):
                os.ftruncate(self._journal_fd, self._size)
            raise SessionError(
                f"could not write session journal {self._path}: {failure.strerror}; "
                "free the disk or fix its permissions, then resume the session"
            ) from None
        self._size += len(line)
        return time.perf_counter() - started


@dataclass(frozen=True)
class _ParsedJournal:
    records: list[Record]
    good_length: int
    """Bytes up to the end of the last whole record; a torn tail lies beyond."""
    unterminated: bool
    """The last whole record has no newline after it."""


def _parse_journal(data: bytes, path: Path) -> _ParsedJournal:
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last newline: empty when the file ends on one
    final = tail if tail else (lines.pop() if lines else b"")
    final_number = len(lines) + 1
    records: list[Record] = []
    offset = 0
    for number, line in enumerate(lines, start=1):
        records.append(_parse_line(line, path, number))
        offset += len(line) + 1
    if not final:
        return _ParsedJournal(records, offset, unterminated=False)
    try:
        parsed = read_record_json(final)
    except jsonx.JsonError:
        return _ParsedJournal(records, offset, unterminated=False)
    records.append(_record_at(parsed, path, final_number))
    return _ParsedJournal(
        records, offset + len(final) + (0 if tail else 1), unterminated=bool(tail)
    )


def _parse_line(line: bytes, path: Path, number: int) -> Record:
    try:
        parsed = read_record_json(line)
    except jsonx.JsonError as bad:
        raise JournalError(f"{path} line {number} is corrupt: it {bad}") from None
    return _record_at(parsed, path, number)


def _record_at(parsed: object, path: Path, number: int) -> Record:
    try:
        return record_from_json(parsed)
    except JournalError as bad:
        raise JournalError(f"{path} line {number} is corrupt: {bad}") from None


def _is_session_id(text: str) -> bool:
    return len(text) <= MAX_SESSION_ID_LENGTH and _SESSION_ID.fullmatch(text) is not None


def _refuse_symlink(path: Path) -> None:
    if path.is_symlink():
        raise SessionError(f"{path} is a symlink, which is refused; remove it")


def _open_file(path: Path, flags: int) -> int:
    """Open without following a symlink, and hold the file to 0600 and to being a regular file."""
    try:
        # Non-blocking, so a FIFO planted at the path cannot hold the open; the regular-file
        # check below then refuses it.
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, _FILE_MODE)
    except OSError as failure:
        if failure.errno == errno.ELOOP:
            raise SessionError(f"{path} is a symlink, which is refused; remove it") from None
        if isinstance(failure, FileNotFoundError | FileExistsError):
            raise
        raise SessionError(f"cannot open {path}: {failure.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SessionError(f"{path} is not a regular file; remove it")
        os.set_blocking(fd, True)
        if stat.S_IMODE(info.st_mode) != _FILE_MODE:
            try:
                os.fchmod(fd, _FILE_MODE)
            except OSError as failure:
                raise SessionError(
                    f"cannot restrict {path} to mode 0600: {failure.strerror}"
                ) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def file_backend(*, directory: str | os.PathLike[str] | None = None) -> FileSessionStore:
    """The registry's factory: the directory given, else the default state directory."""
    return FileSessionStore(directory or default_state_directory())
