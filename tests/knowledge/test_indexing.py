"""Indexing: which files, reconciling changes and deletions, a generated corpus searched."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.knowledge.indexing import MAX_FILE_BYTES, index_files, walk
from fisk_ai.knowledge.search import SearchStatus, search, sources
from fisk_ai.knowledge.store import KnowledgeReader, KnowledgeWriter
from tests.knowledge.conftest import index, write_corpus


def _generated(root: Path, count: int) -> Path:
    topics = ["retention", "backup", "deploy", "rollback", "alerting", "tracing", "billing"]
    for number in range(count):
        topic = topics[number % len(topics)]
        body = "\n\n".join(
            f"Paragraph {paragraph} of note {number} about {topic}, filler words " * 8
            for paragraph in range(6)
        )
        text = f"# {topic.title()} note {number}\n\n{body}\n\n## Details\n\nunique{number}marker\n"
        write_corpus(root, {f"area{number % 10}/note{number:04d}.md": text})
    return root


def test_a_generated_corpus_is_indexed_and_searched(store: Path, tmp_path: Path) -> None:
    corpus = _generated(tmp_path / "corpus", 300)

    report = index(store, corpus)

    assert (report.added, report.files, report.removed) == (300, 300, 0)
    assert report.chunks >= 900
    reader = KnowledgeReader(store)
    assert reader.open()
    with reader.use() as connection:
        answer = search(connection, "unique123marker", 5)
        top = search(connection, "rollback", 20)
    reader.close()
    assert answer.status is SearchStatus.OK
    [hit] = answer.hits
    assert hit.citation.startswith(f"{corpus.as_posix()}/area3/note0123.md#")
    assert hit.heading_path == "Alerting note 123 > Details"
    # A heading match counts twice: the notes titled Rollback outrank mere mentions.
    assert len(top.hits) == 20 and all("Rollback" in hit.heading_path for hit in top.hits)


def test_unchanged_files_are_skipped_and_changed_ones_replaced(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})
    index(store, corpus)
    (corpus / "b.md").write_text("# B\n\ngamma\n\n# C\n\ndelta\n")

    report = index(store, corpus)

    assert (report.added, report.updated, report.skipped, report.chunks) == (0, 1, 1, 3)
    reader = KnowledgeReader(store)
    reader.open()
    with reader.use() as connection:
        assert search(connection, "beta", 5).hits == ()
        assert [hit.citation for hit in search(connection, "delta", 5).hits] == [
            f"{corpus.as_posix()}/b.md#1"
        ]
    reader.close()


def test_reconciling_removes_deleted_files_and_their_chunks(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})
    index(store, corpus)
    (corpus / "b.md").unlink()

    report = index(store, corpus)

    assert report.removed == 1
    with KnowledgeWriter(store) as writer:
        assert list(writer.documents()) == [f"{corpus.as_posix()}/a.md"]
        count = writer.connection.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'beta'"
        ).fetchone()[0]
    assert count == 0


def test_explicit_paths_remove_nothing(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})
    index(store, corpus)
    (corpus / "b.md").unlink()

    assert index(store, corpus, reconcile=False).removed == 0


def test_a_walk_that_sees_no_file_removes_nothing(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    index(store, corpus)
    (corpus / "a.md").unlink()

    assert index(store, corpus).removed == 0


def test_the_walk_skips_what_is_not_the_operators_corpus(tmp_path: Path) -> None:
    corpus = write_corpus(
        tmp_path / "docs",
        {
            "keep.md": "k",
            "keep.MARKDOWN": "k",
            "notes.txt": "k",
            "notes.text": "k",
            "image.png": "k",
            "code.py": "k",
            ".hidden/secret.md": "k",
            "memory/ops/build.notes.md": "k",
            "sub/deep.md": "k",
        },
    )
    (corpus / "big.md").write_text("x" * (MAX_FILE_BYTES + 1))
    (corpus / "link.md").symlink_to(corpus / "keep.md")
    (corpus / "linked-dir").symlink_to(corpus / "sub")
    store = corpus / "store"
    write_corpus(store, {"own.md": "k"})

    names = sorted(path.relative_to(corpus).as_posix() for path in walk([str(corpus)], store))

    assert names == ["keep.MARKDOWN", "keep.md", "notes.text", "notes.txt", "sub/deep.md"]


def test_a_file_that_is_not_utf8_is_left_out(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    (corpus / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))

    report = index(store, corpus)

    assert (report.added, report.files) == (1, 1)


def test_a_dry_run_writes_nothing(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    files = list(walk([str(corpus)], store))

    report = index_files(None, {}, files, reconcile=True)

    assert report.line(dry_run=True) == (
        "would index: added=1 updated=0 skipped=0 removed=0 (1 files, 1 chunks)"
    )
    assert not store.exists()


def test_a_reindex_starts_from_nothing(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    index(store, corpus)

    report = index(store, corpus, rebuild=True)

    assert (report.added, report.skipped) == (1, 0)
    reader = KnowledgeReader(store)
    reader.open()
    with reader.use() as connection:
        assert [source.title for source in sources(connection)] == ["A"]
    reader.close()
