"""Knowledge over a tree that changes between the walk and the read: a file swapped for a
symlink to a secret, for a hard link to one, or for a FIFO, or grown past the cap, is never
indexed and never hangs the indexer (issue 25, item 4).

The swap happens in the progress callback, which ``index_files`` calls for each file just
before reading it: exactly the moment after the walk listed the file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from fisk_ai.knowledge.indexing import MAX_FILE_BYTES, IndexReport, index_files, walk
from fisk_ai.knowledge.search import search
from fisk_ai.knowledge.store import KnowledgeReader, KnowledgeWriter

SECRET = "topsecretvalue"


def _index_swapping(
    store: Path, corpus: Path, swap: Callable[[Path], None]
) -> tuple[IndexReport, list[str]]:
    swapped = corpus / "notes.md"

    def progress(done: int, total: int, cited: str) -> None:
        if cited.endswith("notes.md"):
            swap(swapped)

    with KnowledgeWriter(store) as writer:
        files = list(walk([str(corpus)], store))
        report = index_files(writer, writer.documents(), files, reconcile=True, progress=progress)
        indexed = sorted(writer.documents())
    return report, indexed


def _corpus(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "notes.md").write_text("# Notes\n\nordinary words\n")
    (corpus / "other.md").write_text("# Other\n\nmore ordinary words\n")
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text(f"# Secret\n\n{SECRET}\n")
    return corpus, secret


def _secret_found(store: Path) -> bool:
    reader = KnowledgeReader(store)
    assert reader.open()
    try:
        with reader.use() as connection:
            return bool(search(connection, SECRET, 5).hits)
    finally:
        reader.close()


def test_a_file_swapped_for_a_symlink_to_a_secret_is_not_indexed(tmp_path: Path) -> None:
    corpus, secret = _corpus(tmp_path)
    store = tmp_path / "knowledge"

    def swap(path: Path) -> None:
        path.unlink()
        path.symlink_to(secret)

    report, indexed = _index_swapping(store, corpus, swap)

    assert indexed == [f"{corpus.as_posix()}/other.md"]
    assert report.files == 1
    assert not _secret_found(store)


def test_a_file_swapped_for_a_hard_link_to_a_secret_is_not_indexed(tmp_path: Path) -> None:
    corpus, secret = _corpus(tmp_path)
    store = tmp_path / "knowledge"

    def swap(path: Path) -> None:
        path.unlink()
        os.link(secret, path)

    _index_swapping(store, corpus, swap)

    assert not _secret_found(store)


def test_a_file_grown_past_the_cap_after_the_walk_is_not_indexed(tmp_path: Path) -> None:
    corpus, _ = _corpus(tmp_path)
    store = tmp_path / "knowledge"

    def grow(path: Path) -> None:
        with path.open("a") as grown:
            grown.truncate(50 * 1024 * 1024)

    report, indexed = _index_swapping(store, corpus, grow)

    assert indexed == [f"{corpus.as_posix()}/other.md"]
    assert report.chunks < MAX_FILE_BYTES // 1024


def test_a_file_swapped_for_a_fifo_is_skipped_without_waiting(tmp_path: Path) -> None:
    corpus, _ = _corpus(tmp_path)
    store = tmp_path / "knowledge"

    def swap(path: Path) -> None:
        path.unlink()
        os.mkfifo(path)

    report, indexed = _index_swapping(store, corpus, swap)

    assert indexed == [f"{corpus.as_posix()}/other.md"]
    assert report.files == 1
