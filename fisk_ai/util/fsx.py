"""File helpers for the files fisk-ai creates that may hold secrets or conversation text."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from fisk_ai.errors import FiskError

PRIVATE_FILE_MODE = 0o600


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
