"""`fisk knowledge watch`: keep the index in line with the files as they change.

The watcher holds the writer lock for as long as it runs. It first brings the index in line
with a full pass (reconciling deletions when it walks the configured paths; ``--no-initial``
skips it), then waits on watchfiles: the kernel's change events are gathered until the files
have been quiet for the debounce (2 s unless ``--debounce`` says otherwise, at least 100 ms, as
in the Go original), or for ten debounces at most while changes keep coming, and each gathered
set is applied in one pass. Events arriving during a pass are buffered by watchfiles and make
exactly one follow-up set, so a burst of saves costs one pass, not one per event.

- A created or edited file is indexed (unchanged content is skipped by its hash).
- A deleted file, or every document under a deleted directory, is removed, but only when the
  path is still gone at the moment the pass runs: an editor's atomic save (write a temporary,
  rename over the original) reports a deletion of a file that exists again.
- Events under the store's own directory (the database's write-ahead log is written by the
  pass itself), in dot directories and in directories named memory are ignored, with the same
  rules as `fisk knowledge index`.
- Running out of inotify watches is one warning naming the kernel limit, not a crash.
"""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path

from fisk_ai.knowledge.errors import KnowledgeError
from fisk_ai.knowledge.indexing import (
    Embed,
    IndexReport,
    eligible_in_root,
    index_files,
    walk,
)
from fisk_ai.knowledge.store import KnowledgeWriter

__all__ = ["DEFAULT_DEBOUNCE", "MIN_DEBOUNCE", "Watcher"]

DEFAULT_DEBOUNCE = timedelta(seconds=2)
MIN_DEBOUNCE = timedelta(milliseconds=100)
# A stream of changes that never goes quiet (a log being written) is still applied, every this
# many debounces.
_LONGEST_GATHER = 10
_WATCH_LIMIT = "/proc/sys/fs/inotify/max_user_watches"


def _cited(path: Path) -> str:
    text = path.as_posix()
    return text[2:] if text.startswith("./") else text


class Watcher:
    """Watch ``roots`` (as written, for citations) and keep ``writer``'s index current."""

    def __init__(
        self,
        writer: KnowledgeWriter,
        roots: Sequence[str],
        *,
        reconcile: bool,
        embed: Embed | None = None,
        debounce: timedelta = DEFAULT_DEBOUNCE,
        initial_pass: bool = True,
    ) -> None:
        if debounce < MIN_DEBOUNCE:
            raise KnowledgeError(
                f"the watch debounce must be at least 100ms, not {debounce.total_seconds():g}s; "
                "raise --debounce"
            )
        self._writer = writer
        self._quiet_ms = int(debounce.total_seconds() * 1000)
        self._initial_pass = initial_pass
        self._roots = [(root, Path(root).absolute()) for root in roots]
        self._reconcile = reconcile
        self._embed = embed
        self._store = writer.paths.directory
        self.watching = threading.Event()
        """Set once the watch is registered and the index has caught up with the files."""

    def full_pass(self) -> IndexReport:
        files = list(walk([root for root, _ in self._roots], self._store))
        return index_files(
            self._writer,
            self._writer.documents(),
            files,
            reconcile=self._reconcile,
            embed=self._embed,
        )

    def _as_cited(self, absolute: Path) -> tuple[Path, Path] | None:
        """The path as a walk of its root would give it, and that root's absolute path."""
        for root, top in self._roots:
            if absolute == top:
                return Path(root), top
            try:
                relative = absolute.relative_to(top)
            except ValueError:
                continue
            return Path(root) / relative, top
        return None

    def apply(self, changed: Sequence[Path]) -> IndexReport:
        """One pass over a set of changed absolute paths: index what exists, remove what is
        still gone."""
        store = self._store.absolute()
        to_index: list[Path] = []
        gone: set[str] = set()
        stored = self._writer.documents()
        for absolute in sorted(set(changed)):
            if absolute == store or store in absolute.parents:
                continue
            found = self._as_cited(absolute)
            if found is None:
                continue
            cited, top = found
            if absolute.exists():
                if absolute.is_dir():
                    to_index += list(walk([str(cited)], self._store))
                elif eligible_in_root(absolute, top, self._store):
                    to_index.append(cited)
                continue
            name = _cited(cited)
            prefix = name.rstrip("/") + "/"
            gone.update(path for path in stored if path == name or path.startswith(prefix))
        report = index_files(
            self._writer, stored, sorted(set(to_index)), reconcile=False, embed=self._embed
        )
        if gone:
            report.removed = self._writer.remove_documents(sorted(gone))
        return report

    def run(
        self,
        on_pass: Callable[[IndexReport], None],
        stop: threading.Event | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        """Watch until ``stop`` is set (or the process is interrupted), calling ``on_pass``
        after the first pass and after every later pass that changed something. The first pass
        goes over every file once the watch is registered, so nothing changed while it was being
        set up is missed (unless the watcher was made without it); then ``watching`` is set."""
        import watchfiles

        paths = [top for _, top in self._roots]
        store = self._store.absolute()

        def wanted(_change: watchfiles.Change, path: str) -> bool:
            candidate = Path(path)
            return candidate != store and store not in candidate.parents

        try:
            for changes in watchfiles.watch(
                *paths,
                watch_filter=wanted,
                debounce=self._quiet_ms * _LONGEST_GATHER,
                step=self._quiet_ms,
                stop_event=stop,
                raise_interrupt=False,
                rust_timeout=200,
                # The first (empty) yield says the watch is registered.
                yield_on_timeout=True,
            ):
                if not self.watching.is_set() and self._initial_pass:
                    report = self.full_pass()
                    self.watching.set()
                    on_pass(report)
                    continue
                self.watching.set()
                if changes:
                    report = self.apply([Path(path) for _, path in changes])
                else:
                    continue
                if report.added or report.updated or report.removed:
                    on_pass(report)
        except OSError as exc:
            if exc.errno != errno.ENOSPC and "watch" not in str(exc).lower():
                raise
            message = (
                f"the kernel ran out of file watches ({exc}); raise the limit in "
                f"{_WATCH_LIMIT} (sysctl fs.inotify.max_user_watches) and start watch again"
            )
            if on_warning is None:
                raise KnowledgeError(message) from None
            on_warning(message)
