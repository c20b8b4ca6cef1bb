"""`fisk knowledge watch`: a create, an edit and a delete reach the index. How soon is
bench/knowledge.py's to measure (the budget is a second); the bound here only stops a watcher
that never follows from hanging the suite."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from fisk_ai.knowledge.store import KnowledgeReader, KnowledgeWriter, stored_documents
from fisk_ai.knowledge.watch import MIN_DEBOUNCE, Watcher
from tests.patience import DEADLINE


def wait_for(check: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the index never followed the file"
        time.sleep(0.01)


def test_watch_follows_a_create_an_edit_and_a_delete(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keep.md").write_text("# Keep\n\nalpha\n")
    store = tmp_path / "store"
    stop = threading.Event()
    with KnowledgeWriter(store) as writer:
        watcher = Watcher(writer, [str(docs)], reconcile=True, debounce=MIN_DEBOUNCE)
        assert watcher.full_pass().added == 1
        thread = threading.Thread(target=watcher.run, args=(lambda _report: None, stop))
        thread.start()
        reader = KnowledgeReader(store)
        reader.open()

        def hashes() -> dict[str, str]:
            with reader.use() as connection:
                return {path: doc.hash for path, doc in stored_documents(connection).items()}

        try:
            assert watcher.watching.wait(DEADLINE), "the watch never started"
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


def test_a_file_written_before_the_watch_starts_is_indexed_by_its_first_pass(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    store = tmp_path / "store"
    stop = threading.Event()
    passes: list[int] = []
    with KnowledgeWriter(store) as writer:
        watcher = Watcher(writer, [str(docs)], reconcile=True, debounce=MIN_DEBOUNCE)
        watcher.full_pass()
        # Written after the first pass and before anything watches: nothing reports it but the
        # pass the watch makes once it is registered.
        (docs / "early.md").write_text("# Early\n\ndelta\n")
        thread = threading.Thread(
            target=watcher.run, args=(lambda report: passes.append(report.added), stop)
        )
        thread.start()
        try:
            assert watcher.watching.wait(DEADLINE), "the watch never started"
        finally:
            stop.set()
            thread.join(10)
    assert passes[0] == 1
    reader = KnowledgeReader(store)
    reader.open()
    try:
        with reader.use() as connection:
            assert f"{docs.as_posix()}/early.md" in stored_documents(connection)
    finally:
        reader.close()
