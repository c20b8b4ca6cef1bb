"""The prompts the operator sent, kept across sessions for Ctrl-R.

One JSON line a prompt (``{"prompt": "..."}``) in ``$XDG_STATE_HOME/fisk-ai/history/prompts.jsonl``
(``~/.local/state/fisk-ai/history/`` without it), the file 0600 in a 0700 directory, a symlink at
either path refused. Writers append under an exclusive flock on ``prompts.lock`` beside it, so two
workstations at once never interleave or lose a line; once the file holds more than the limit and
a slack, the writer holding the lock rewrites it with the newest entries and renames it into
place, so a reader sees the old file or the new one, never half of one. Readers take no lock: a
line that does not parse (a write cut short by a crash, a hand edit) is skipped.

A prompt holding a credential (an API key, a private key, a token), as the PII guard's secret
checks find one, is not kept: the history outlives the conversation and is read by every later
session.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from fisk_ai.errors import FiskError
from fisk_ai.util.fsx import PRIVATE_FILE_MODE, create_private_file, make_private_directories

__all__ = [
    "HISTORY_LIMIT",
    "PromptHistory",
    "PromptHistoryError",
    "default_history_path",
    "holds_secret",
    "matching_prompts",
]

HISTORY_LIMIT = 1000
"""The newest prompts kept; older ones are dropped when the file is compacted."""
COMPACTION_SLACK = 100
"""Entries the file may hold beyond the limit before it is rewritten, so a full history is
rewritten once in this many prompts rather than at every one."""
PRIVATE_DIRECTORY_MODE = 0o700


class PromptHistoryError(FiskError):
    """The history file cannot be used where it is (a symlink, not a regular file, no access)."""


def default_history_path() -> Path:
    """``$XDG_STATE_HOME/fisk-ai/history/prompts.jsonl``, beside the sessions' ``runs``."""
    from platformdirs.unix import Unix

    return Unix("fisk-ai").user_state_path / "history" / "prompts.jsonl"


def holds_secret(text: str) -> bool:
    """Whether ``text`` carries something the PII guard counts as a secret."""
    from fisk_ai.agent.pii import Check, scanner

    return any(finding.check is Check.SECRET for finding in scanner().scan(text))


def matching_prompts(entries: Sequence[str], query: str) -> list[str]:
    """The ``entries`` (oldest first) that hold ``query`` in any case, newest first, each prompt
    once (at its newest place); an empty query matches them all."""
    needle = query.casefold()
    seen: set[str] = set()
    found: list[str] = []
    for entry in reversed(entries):
        if entry in seen or needle not in entry.casefold():
            continue
        seen.add(entry)
        found.append(entry)
    return found


class PromptHistory:
    """The history file at ``path``; every call reads or writes the file, so a prompt another
    workstation sent a moment ago is found by the next search here."""

    def __init__(self, path: Path | None = None, *, limit: int = HISTORY_LIMIT) -> None:
        self.path = path or default_history_path()
        self.limit = limit
        self._lock_path = self.path.with_suffix(".lock")

    def add(self, prompt: str) -> None:
        """Keep ``prompt`` as the newest entry, unless it is blank, repeats the newest entry or
        holds a secret."""
        if not prompt.strip() or holds_secret(prompt):
            return
        self._prepare_directory()
        with self._locked():
            data = self._read_bytes()
            entries = list(_collapsed(_parsed(data)))
            if entries and entries[-1] == prompt:
                return
            line = _encoded(prompt)
            if data and not data.endswith(b"\n"):
                # A write cut short left a partial line; the new entry starts on a line of its own.
                line = b"\n" + line
            if len(entries) + 1 > self.limit + COMPACTION_SLACK:
                self._rewrite([*entries, prompt][-self.limit :])
            else:
                self._append(line)

    def entries(self) -> list[str]:
        """The newest ``limit`` prompts, oldest first, a prompt sent twice in a row kept once."""
        return list(_collapsed(_parsed(self._read_bytes())))[-self.limit :]

    def search(self, query: str) -> list[str]:
        """The prompts holding ``query`` in any case, newest first, each once."""
        return matching_prompts(self.entries(), query)

    def _prepare_directory(self) -> None:
        directory = self.path.parent
        try:
            make_private_directories(directory)
        except FileExistsError:
            pass  # something that is not a directory; the check below names it
        except OSError as failure:
            raise PromptHistoryError(
                f"cannot create the prompt history directory {directory}: {failure.strerror}"
            ) from None
        info = directory.lstat()
        if stat.S_ISLNK(info.st_mode):
            raise PromptHistoryError(
                f"the prompt history directory {directory} is a symlink, which is refused; "
                "replace it with a real directory"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise PromptHistoryError(f"{directory} is not a directory; move it away")
        if stat.S_IMODE(info.st_mode) != PRIVATE_DIRECTORY_MODE:
            try:
                directory.chmod(PRIVATE_DIRECTORY_MODE)
            except OSError as failure:
                raise PromptHistoryError(
                    f"cannot restrict {directory} to mode 0700: {failure.strerror}"
                ) from None

    @contextmanager
    def _locked(self) -> Iterator[None]:
        descriptor = _open_private(self._lock_path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)

    def _read_bytes(self) -> bytes:
        try:
            descriptor = _open_private(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return b""
        with os.fdopen(descriptor, "rb") as file:
            return file.read()

    def _append(self, line: bytes) -> None:
        descriptor = _open_private(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            # One write of the whole line: O_APPEND puts it at the end even past another
            # process's write, and the lock keeps any other writer out meanwhile.
            os.write(descriptor, line)
        finally:
            os.close(descriptor)

    def _rewrite(self, entries: Iterable[str]) -> None:
        replacement = self.path.with_suffix(".jsonl.new")
        try:
            with create_private_file(replacement) as file:
                file.write(b"".join(_encoded(entry) for entry in entries))
                file.flush()
                os.fsync(file.fileno())
            replacement.replace(self.path)
        except OSError as failure:
            raise PromptHistoryError(
                f"cannot rewrite the prompt history {self.path}: {failure.strerror}"
            ) from None


def _encoded(prompt: str) -> bytes:
    return json.dumps({"prompt": prompt}, ensure_ascii=False).encode("utf-8", "replace") + b"\n"


def _parsed(data: bytes) -> Iterator[str]:
    for line in data.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        prompt = record.get("prompt") if isinstance(record, dict) else None
        if isinstance(prompt, str) and prompt.strip():
            yield prompt


def _collapsed(prompts: Iterable[str]) -> Iterator[str]:
    previous: str | None = None
    for prompt in prompts:
        if prompt != previous:
            yield prompt
        previous = prompt


def _open_private(path: Path, flags: int) -> int:
    """Open ``path`` without following a symlink, and hold it to 0600 and a regular file."""
    try:
        # Non-blocking, so a FIFO planted at the path cannot hold the open.
        descriptor = os.open(
            path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, PRIVATE_FILE_MODE
        )
    except FileNotFoundError:
        raise
    except OSError as failure:
        if failure.errno == errno.ELOOP:
            raise PromptHistoryError(f"{path} is a symlink, which is refused; remove it") from None
        raise PromptHistoryError(f"cannot open {path}: {failure.strerror}") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise PromptHistoryError(f"{path} is not a regular file; remove it")
        os.set_blocking(descriptor, True)
        if stat.S_IMODE(info.st_mode) != PRIVATE_FILE_MODE:
            os.fchmod(descriptor, PRIVATE_FILE_MODE)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
