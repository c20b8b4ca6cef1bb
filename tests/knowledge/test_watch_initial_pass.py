"""A watch started without its initial pass indexes only what changes after it starts."""

from __future__ import annotations

import threading
from pathlib import Path

from fisk_ai.knowledge.store import KnowledgeWriter
from fisk_ai.knowledge.watch import MIN_DEBOUNCE, Watcher
from tests.knowledge.conftest import write_corpus
from tests.patience import DEADLINE


def test_watch_without_the_initial_pass_indexes_only_later_changes(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs", {"before.md": "# Before\n\nalpha\n"})
    store = tmp_path / "store"
    stop = threading.Event()
    indexed = threading.Event()
    with KnowledgeWriter(store) as writer:
        watcher = Watcher(
            writer, [str(docs)], reconcile=True, debounce=MIN_DEBOUNCE, initial_pass=False
        )
        thread = threading.Thread(target=watcher.run, args=(lambda _r: indexed.set(), stop))
        thread.start()
        try:
            assert watcher.watching.wait(DEADLINE), "the watch never started"
            (docs / "after.md").write_text("# After\n\nbeta\n")
            assert indexed.wait(DEADLINE), "the change was never indexed"
        finally:
            stop.set()
            thread.join(10)
        paths = sorted(Path(path).name for path in writer.documents())

    assert paths == ["after.md"]
