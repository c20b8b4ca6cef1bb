"""File helpers for the files fisk-ai creates that may hold secrets or conversation text."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import BinaryIO

from fisk_ai.errors import FiskError

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIRECTORY_MODE = 0o700


class PrivateFileError(FiskError):
    """A private file could not be created where it was asked for."""


def create_private_file(path: str | os.PathLike[str]) -> BinaryIO:
    """Create ``path`` afresh, readable and writable by the owner only, and open it for writing.

    Whatever was at the path is unlinked first, so a symlink planted there is removed rather than
    followed. The create is exclusive and refuses to follow a link, so something planted between
    the unlink and the create makes this fail instead of writing through it.
    """
    target = Path(path)
    try:
        target.unlink()
    except FileNotFoundError:
        pass
    except OSError as failure:
        raise PrivateFileError(f"cannot replace {target}: {failure.strerror}") from None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(target, flags, PRIVATE_FILE_MODE)
    except FileExistsError:
        raise PrivateFileError(
            f"{target} reappeared while it was being created; remove it and try again"
        ) from None
    except OSError as failure:
        raise PrivateFileError(f"cannot create {target}: {failure.strerror}") from None
    # The umask may have cleared bits the owner needs; it can never have added any.
    os.fchmod(descriptor, PRIVATE_FILE_MODE)
    return os.fdopen(descriptor, "wb")


def make_private_directories(path: str | os.PathLike[str]) -> None:
    """Create the directory ``path`` and each missing parent, every one of them 0700 whatever
    the umask; directories that already exist are left as they are.

    ``Path.mkdir(parents=True)`` gives the parents it creates the umask's mode (0777 under
    ``umask 000``) and the umask can clear owner bits the leaf needs, so each directory is
    created 0700 and set to exactly that through a descriptor that refuses a link (something
    swapped in after the create is not changed). Raises ``FileExistsError`` when ``path`` is
    something other than a directory, as ``mkdir`` does, and ``OSError`` as ``mkdir`` does.
    """
    target = Path(path)
    missing: list[Path] = []
    current = target
    while not os.path.lexists(current) and current.parent != current:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(PRIVATE_DIRECTORY_MODE)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue  # another process made it first; it is theirs to have set
        descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.fchmod(descriptor, PRIVATE_DIRECTORY_MODE)
        finally:
            os.close(descriptor)
    if not target.is_dir():
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target))
