"""The file backend: one markdown file per memory, ``<directory>/<key>.md``.

The directory is 0700 and each file 0600, created so and re-asserted when touched; a symlink at
the directory or at a memory's path is refused rather than followed. A write is staged in a
private temp file and fsynced, then linked into place for a create (so two writers racing for a
new key cannot both win) or renamed over the old file for an overwrite, and the directory is
fsynced so the name survives a crash. Overwrites are last-writer-wins: this backend keeps no
revisions, so it cannot enforce read-before-update.

Listing re-validates every name, so a file planted by hand whose stem is not a legal key, or
anything that is not a regular file, stays invisible.
"""

from __future__ import annotations

import asyncio
import builtins
import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from fisk_ai.memory.store import (
    MAX_ENTRY_BYTES,
    Item,
    Memory,
    MemoryExists,
    MemoryStoreError,
    Scope,
    StoreInfo,
    check_capacity,
    is_valid_key,
    parse,
    serialize,
    validate_key,
    validate_write,
)
from fisk_ai.util.fsx import make_private_directories

__all__ = ["FileMemoryStore", "file"]

SUFFIX = ".md"
TEMP_PREFIX = ".memtmp-"
_DIRECTORY_MODE = 0o700
_FILE_MODE = 0o600

_Result = TypeVar("_Result")


class FileMemoryStore:
    """Memories as files under ``directory``, which is made (0700) on first write."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._directory = Path(directory)

    @property
    def directory(self) -> Path:
        return self._directory

    def info(self) -> StoreInfo:
        # A path is not something a span or a remote peer should learn.
        return StoreInfo("file")

    async def list(self) -> builtins.list[Item]:
        return await self._in_thread(self._list)

    async def read(self, key: str, scope: Scope | None = None) -> Memory | None:
        validate_key(key)
        return await self._in_thread(self._read, key)

    async def create(
        self, key: str, description: str, content: str, scope: Scope | None = None
    ) -> None:
        normalized = validate_write(key, description, content)
        await self._in_thread(self._create, key, serialize(normalized, content))

    async def update(
        self, key: str, description: str, content: str, scope: Scope | None = None
    ) -> None:
        normalized = validate_write(key, description, content)
        await self._in_thread(self._update, key, serialize(normalized, content))

    async def delete(self, key: str, scope: Scope | None = None) -> bool:
        validate_key(key)
        return await self._in_thread(self._delete, key)

    async def _in_thread(self, work: Callable[..., _Result], *arguments: object) -> _Result:
        return await asyncio.to_thread(work, *arguments)

    def _path(self, key: str) -> Path:
        return self._directory / f"{key}{SUFFIX}"

    def _list(self) -> builtins.list[Item]:
        if self._directory_info() is None:
            return []
        items = []
        for key in self._keys():
            memory = self._read(key)
            if memory is not None:
                items.append(Item(key, memory.description))
        return items

    def _keys(self) -> builtins.list[str]:
        keys = []
        with os.scandir(self._directory) as entries:
            for entry in entries:
                if not entry.name.endswith(SUFFIX) or not entry.is_file(follow_symlinks=False):
                    continue
                key = entry.name.removesuffix(SUFFIX)
                if is_valid_key(key):
                    keys.append(key)
        return sorted(keys)

    def _read(self, key: str) -> Memory | None:
        if self._directory_info() is None:
            return None
        path = self._path(key)
        try:
            fd = _open_private(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            data = _read_all(fd, path)
        finally:
            os.close(fd)
        description, content = parse(data)
        return Memory(key, description, content)

    def _create(self, key: str, value: bytes) -> None:
        self._prepare_directory()
        check_capacity(len(self._keys()))
        path = self._path(key)
        staged = self._stage(value)
        try:
            os.link(staged, path, follow_symlinks=False)
        except FileExistsError:
            raise MemoryExists(f"a memory is already stored under key {key!r}") from None
        except OSError as failure:
            raise self._failed("save", key, failure) from None
        finally:
            staged.unlink(missing_ok=True)
        _fsync_directory(self._directory)

    def _update(self, key: str, value: bytes) -> None:
        self._prepare_directory()
        path = self._path(key)
        if path.is_symlink():
            raise _symlink(path)
        if not path.exists():
            # An overwrite of nothing adds an entry, so it counts like a create.
            check_capacity(len(self._keys()))
        staged = self._stage(value)
        try:
            staged.replace(path)
        except OSError as failure:
            staged.unlink(missing_ok=True)
            raise self._failed("save", key, failure) from None
        _fsync_directory(self._directory)

    def _delete(self, key: str) -> bool:
        if self._directory_info() is None:
            return False
        path = self._path(key)
        if path.is_symlink():
            raise _symlink(path)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        except OSError as failure:
            raise self._failed("delete", key, failure) from None
        _fsync_directory(self._directory)
        return True

    def _stage(self, value: bytes) -> Path:
        """``value`` in a fsynced private temp file beside the memories."""
        staged = self._directory / f"{TEMP_PREFIX}{secrets.token_hex(8)}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(staged, flags, _FILE_MODE)
        except OSError as failure:
            raise MemoryStoreError(
                f"cannot write in the memory directory {self._directory}: {failure.strerror}"
            ) from None
        try:
            # The umask may have cleared bits the owner needs; it can never have added any.
            os.fchmod(fd, _FILE_MODE)
            view = memoryview(value)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as failure:
            os.close(fd)
            staged.unlink(missing_ok=True)
            raise MemoryStoreError(
                f"cannot write in the memory directory {self._directory}: {failure.strerror}"
            ) from None
        os.close(fd)
        return staged

    def _prepare_directory(self) -> None:
        """Make the directory if needed, and hold it to 0700 and to being a real directory."""
        try:
            make_private_directories(self._directory)
        except FileExistsError:
            pass  # something that is not a directory; the check below names it
        except OSError as failure:
            raise MemoryStoreError(
                f"cannot create the memory directory {self._directory}: {failure.strerror}; "
                "change harness.memory.options.directory"
            ) from None
        info = self._directory_info()
        if info is None:
            raise MemoryStoreError(f"the memory directory {self._directory} vanished")
        if stat.S_IMODE(info.st_mode) != _DIRECTORY_MODE:
            try:
                self._directory.chmod(_DIRECTORY_MODE)
            except OSError as failure:
                raise MemoryStoreError(
                    f"cannot restrict the memory directory {self._directory} to mode 0700: "
                    f"{failure.strerror}"
                ) from None

    def _directory_info(self) -> os.stat_result | None:
        try:
            info = self._directory.lstat()
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise MemoryStoreError(
                f"the memory directory {self._directory} is a symlink, which is refused; point "
                "harness.memory.options.directory at the real directory"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise MemoryStoreError(
                f"the memory directory {self._directory} is not a directory; change "
                "harness.memory.options.directory"
            )
        return info

    def _failed(self, doing: str, key: str, failure: OSError) -> MemoryStoreError:
        return MemoryStoreError(
            f"cannot {doing} memory {key!r} in {self._directory}: {failure.strerror}"
        )


def _open_private(path: Path, flags: int) -> int:
    """Open without following a symlink, and hold the file to 0600 and to being a regular file."""
    try:
        # Non-blocking, so a FIFO planted at the path is refused below instead of waiting for a
        # writer that never comes; a regular file ignores the flag.
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as failure:
        if failure.errno == errno.ELOOP:
            raise _symlink(path) from None
        if isinstance(failure, FileNotFoundError):
            raise
        raise MemoryStoreError(f"cannot open {path}: {failure.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise MemoryStoreError(f"{path} is not a regular file; remove it")
        if stat.S_IMODE(info.st_mode) != _FILE_MODE:
            os.fchmod(fd, _FILE_MODE)
    except OSError as failure:
        os.close(fd)
        raise MemoryStoreError(f"cannot restrict {path} to mode 0600: {failure.strerror}") from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_all(fd: int, path: Path) -> bytes:
    """At most ``MAX_ENTRY_BYTES``, the largest value a write makes: a file grown past it by
    hand is read only that far, so its body is cut there."""
    chunks: builtins.list[bytes] = []
    remaining = MAX_ENTRY_BYTES
    try:
        while remaining > 0 and (chunk := os.read(fd, remaining)):
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as failure:
        raise MemoryStoreError(f"cannot read {path}: {failure.strerror}") from None
    return b"".join(chunks)


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _symlink(path: Path) -> MemoryStoreError:
    return MemoryStoreError(f"{path} is a symlink, which is refused; remove it")


def file(*, directory: str | os.PathLike[str]) -> FileMemoryStore:
    """The registry's factory: memories under ``directory`` (relative to the working directory
    when it is not absolute)."""
    return FileMemoryStore(directory)
