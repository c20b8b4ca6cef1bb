"""The database on disk: the format gate both ways, one writer, modes, symlinks, reset."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from fisk_ai.knowledge import FormatMismatch, KnowledgeError, KnowledgeLocked
from fisk_ai.knowledge.store import KnowledgeReader, KnowledgeWriter, connect
from tests.knowledge.conftest import index, write_corpus

REINDEX = "fisk knowledge index --reindex"


def _set_version(store: Path, version: str | None) -> None:
    connection = connect(str(store / "knowledge.db"))
    if version is None:
        connection.execute("DELETE FROM rag_meta")
    else:
        connection.execute("UPDATE rag_meta SET value = ? WHERE key = 'format_version'", (version,))
    connection.close()


def test_a_newer_format_is_refused_naming_upgrade_and_the_reindex(store: Path) -> None:
    KnowledgeWriter(store).__enter__().close()
    _set_version(store, "3")

    with pytest.raises(FormatMismatch, match="newer") as refused:
        KnowledgeReader(store).open()
    assert REINDEX in str(refused.value) and "upgrade fisk-ai" in str(refused.value)
    with pytest.raises(FormatMismatch):
        KnowledgeWriter(store).open()


def test_an_older_format_is_refused_naming_the_reindex(store: Path) -> None:
    KnowledgeWriter(store).__enter__().close()
    _set_version(store, "1")

    with pytest.raises(FormatMismatch, match="older") as refused:
        KnowledgeReader(store).open()
    assert REINDEX in str(refused.value)


def test_emptied_metadata_is_read_by_the_shape_and_pinned_again_by_a_writer(
    store: Path,
) -> None:
    # The Go original's reset leaves the metadata empty until the next index, so the shape
    # decides; the next writer pins the version again.
    KnowledgeWriter(store).__enter__().close()
    _set_version(store, None)

    reader = KnowledgeReader(store)
    assert reader.open()
    reader.close()
    with KnowledgeWriter(store) as writer:
        row = writer.connection.execute(
            "SELECT value FROM rag_meta WHERE key = 'format_version'"
        ).fetchone()
    assert row == ("2",)


def test_a_version_1_shape_is_refused_even_when_it_claims_version_2(store: Path) -> None:
    store.mkdir(parents=True)
    connection = connect(str(store / "knowledge.db"))
    connection.execute("CREATE TABLE documents(id INTEGER PRIMARY KEY, path TEXT)")
    connection.execute("CREATE TABLE rag_meta(key TEXT PRIMARY KEY, value TEXT)")
    connection.execute("INSERT INTO rag_meta VALUES ('format_version', '2')")
    connection.close()

    with pytest.raises(FormatMismatch, match="does not have the tables"):
        KnowledgeReader(store).open()


def test_a_reindex_rebuilds_a_refused_store(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    index(store, corpus)
    _set_version(store, "1")

    report = index(store, corpus, rebuild=True)

    assert report.added == 1
    assert KnowledgeReader(store).open()


def test_a_second_writer_is_refused_at_once(store: Path) -> None:
    with KnowledgeWriter(store), pytest.raises(KnowledgeLocked, match="another knowledge writer"):
        KnowledgeWriter(store).open()
    # Released with the first writer.
    KnowledgeWriter(store).__enter__().close()


def test_a_writer_in_another_process_is_refused(store: Path) -> None:
    with KnowledgeWriter(store):
        code = (
            "import sys\nfrom pathlib import Path\n"
            "from fisk_ai.knowledge import KnowledgeLocked\n"
            "from fisk_ai.knowledge.store import KnowledgeWriter\n"
            "try:\n    KnowledgeWriter(Path(sys.argv[1])).open()\n"
            "except KnowledgeLocked as exc:\n    print(exc)\n    sys.exit(3)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(store)], capture_output=True, text=True, check=False
        )
    assert done.returncode == 3, done.stderr
    assert "another knowledge writer" in done.stdout


def test_readers_search_while_a_writer_holds_the_lock(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    index(store, corpus)
    with KnowledgeWriter(store):
        reader = KnowledgeReader(store)
        assert reader.open()
        with reader.use() as connection:
            assert connection.execute("SELECT count(*) FROM chunks").fetchone()[0] == 1
        reader.close()


def test_the_directory_is_0700_and_the_files_0600_reasserted(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    index(store, corpus)
    (store / "knowledge.db").chmod(0o644)
    index(store, corpus)

    assert stat.S_IMODE(store.stat().st_mode) == 0o700
    for name in ("knowledge.db", "knowledge.db-wal", "knowledge.db-shm", "knowledge.lock"):
        path = store / name
        if path.exists():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, name


@pytest.mark.parametrize("name", ["knowledge.db", "knowledge.db-wal", "knowledge.db-shm"])
def test_a_symlink_at_the_database_or_a_sidecar_is_refused(
    store: Path, tmp_path: Path, name: str
) -> None:
    store.mkdir(parents=True, mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    (store / name).symlink_to(target)

    with pytest.raises(KnowledgeError, match="symlink"):
        KnowledgeWriter(store).open()
    with pytest.raises(KnowledgeError, match="symlink"):
        KnowledgeReader(store).open()


def test_a_symlinked_store_directory_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)

    with pytest.raises(KnowledgeError, match="symlink"):
        KnowledgeWriter(tmp_path / "link").open()


def test_no_database_reads_as_not_built(store: Path) -> None:
    assert KnowledgeReader(store).open() is False
    assert not store.exists()


def test_reset_empties_an_index_whose_fts_drifted(store: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    index(store, corpus)
    connection = connect(str(store / "knowledge.db"))
    # Drift: the index gains a row its content table does not have.
    connection.execute("INSERT INTO chunks_fts(rowid, body, heading_path) VALUES (99, 'ghost', '')")
    connection.close()
    with KnowledgeWriter(store) as writer:
        assert writer.integrity_problems()
        writer.rebuild()
        assert writer.integrity_problems() == []
    with KnowledgeWriter(store, rebuild=True) as writer:
        assert writer.documents() == {}
        assert writer.integrity_problems() == []
