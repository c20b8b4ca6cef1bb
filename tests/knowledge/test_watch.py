"""`fisk knowledge watch`: a create, an edit and a delete reach the index within a second."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from fisk_ai.knowledge.store import KnowledgeReader, KnowledgeWriter, stored_documents
from fisk_ai.knowledge.watch import Watcher


def wait_for(check: Callable[[], bool], seconds: float = 1.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the index did not follow the file in time"
        time.sleep(0.01)


def test_watch_follows_a_create_an_edit_and_a_delete(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keep.md").write_text("# Keep\n\nalpha\n")
    store = tmp_path / "store"
    stop = threading.Event()
    with KnowledgeWriter(store) as writer:
        watcher = Watcher(writer, [str(docs)], reconcile=True)
        assert watcher.full_pass().added == 1
        thread = threading.Thread(target=watcher.run, args=(lambda _report: None, stop))
        thread.start()
        reader = KnowledgeReader(store)
        reader.open()

        def hashes() -> dict[str, str]:
            with reader.use() as connection:
                return {path: doc.hash for path, doc in stored_documents(connection).items()}

        try:
            time.sleep(0.2)  # let the watch register before the first change
            new = docs / "new.md"
            new.write_text("# New\n\nbeta\n")
            cited = f"{docs.as_posix()}/new.md"
            wait_for(lambda: cited in hashes())
            before = hashes()[cited]
            new.write_text("# New\n\ngamma\n")
            wait_for(lambda: hashes().get(cited) not in (None, before))
            new.unlink()
            wait_for(lambda: cited not in hashes())
            assert f"{docs.as_posix()}/keep.md" in hashes()
        finally:
            stop.set()
            thread.join(5)
            reader.close()
