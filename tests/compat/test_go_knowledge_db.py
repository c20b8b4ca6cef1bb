"""A knowledge.db the Go fisk-ai wrote, read here: search, match, sources and stats.

No binary fixture: each test writes the database as the Go indexer does, with the Go schema's
statements (format 2, no index of ours), the writer's pragmas, and the rows its indexer stores
for a small corpus: walked paths as citations, the first heading as the title, mtimes in
seconds, sha256 hashes, chunks in order, and the manifest a lexical build pins (every key, the
model empty). A hybrid build adds the vec0 table without a distance metric and vectors given as
JSON text, as Go inserts them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from fisk_ai.knowledge.indexing import index_files, walk
from fisk_ai.knowledge.search import (
    EnumerateStatus,
    SearchStatus,
    counts,
    enumerate_documents,
    search,
    sources,
)
from fisk_ai.knowledge.store import (
    KnowledgeReader,
    KnowledgeWriter,
    Manifest,
    check_manifest,
    connect,
)

# The statements of Go's base schema (internal/rag/store.go ensureBaseSchema), in its order.
GO_BASE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS documents (
        id    INTEGER PRIMARY KEY,
        path  TEXT NOT NULL UNIQUE,
        title TEXT,
        mtime INTEGER,
        hash  TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS chunks (
        id           INTEGER PRIMARY KEY,
        document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        heading_path TEXT,
        ordinal      INTEGER,
        body         TEXT NOT NULL
    )""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
        body, heading_path, content='chunks', content_rowid='id', tokenize='porter unicode61'
    )""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts_exact USING fts5(
        body, heading_path, content='chunks', content_rowid='id', tokenize='unicode61'
    )""",
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab('chunks_fts_exact', 'row')",
    """CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts(rowid, body, heading_path)
        VALUES (new.id, new.body, new.heading_path);
        INSERT INTO chunks_fts_exact(rowid, body, heading_path)
        VALUES (new.id, new.body, new.heading_path);
    END""",
    """CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, body, heading_path)
        VALUES ('delete', old.id, old.body, old.heading_path);
        INSERT INTO chunks_fts_exact(chunks_fts_exact, rowid, body, heading_path)
        VALUES ('delete', old.id, old.body, old.heading_path);
    END""",
    """CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, body, heading_path)
        VALUES ('delete', old.id, old.body, old.heading_path);
        INSERT INTO chunks_fts_exact(chunks_fts_exact, rowid, body, heading_path)
        VALUES ('delete', old.id, old.body, old.heading_path);
        INSERT INTO chunks_fts(rowid, body, heading_path)
        VALUES (new.id, new.body, new.heading_path);
        INSERT INTO chunks_fts_exact(rowid, body, heading_path)
        VALUES (new.id, new.body, new.heading_path);
    END""",
    "CREATE TABLE IF NOT EXISTS rag_meta (key TEXT PRIMARY KEY, value TEXT)",
)
GO_VECTOR_SCHEMA = (
    """CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0(
        chunk_id  INTEGER PRIMARY KEY,
        embedding FLOAT[4]
    )""",
    """CREATE TRIGGER IF NOT EXISTS chunks_ad_vec AFTER DELETE ON chunks BEGIN
        DELETE FROM chunks_vec WHERE chunk_id = old.id;
    END""",
)

# What the Go indexer stores for a corpus walked from the root "docs": the two documents, their
# chunks as Go's chunker cuts them (breadcrumb apart from the body, 0-based ordinals), and a
# vector for each chunk of a hybrid build.
SPLIT = (
    "# Storage\n\n## Retention\n\nRecords are held for ninety days.\n\n"
    "## Limits\n\nThe policy is set per account.\n"
)
TOGETHER = "# Retention policy\n\nThe retention policy is reviewed each release.\n"
GO_DOCUMENTS = {
    "docs/split.md": (
        SPLIT,
        "Storage",
        [
            ("Storage > Retention", "Records are held for ninety days.", [1.0, 0.0, 0.0, 0.0]),
            ("Storage > Limits", "The policy is set per account.", [0.0, 1.0, 0.0, 0.0]),
        ],
    ),
    "docs/together.md": (
        TOGETHER,
        "Retention policy",
        [
            (
                "Retention policy",
                "The retention policy is reviewed each release.",
                [0.0, 0.0, 1.0, 0.0],
            )
        ],
    ),
}
GO_MTIME_SECONDS = 1_767_225_600
MANIFEST_KEYS = ("format_version", "model", "dimension", "normalized")


def write_go_database(directory: Path, *, hybrid: bool = False, manifest: bool = True) -> Path:
    directory.mkdir(parents=True, mode=0o700)
    database = directory / "knowledge.db"
    connection = connect(str(database))
    connection.execute("PRAGMA auto_vacuum = FULL")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA foreign_keys = ON")
    connection.execute("BEGIN")
    for statement in GO_BASE_SCHEMA + (GO_VECTOR_SCHEMA if hybrid else ()):
        connection.execute(statement)
    if manifest:
        pairs = {
            "format_version": "2",
            "model": "go-embed" if hybrid else "",
            "dimension": "4" if hybrid else "0",
            "normalized": "true" if hybrid else "false",
            "query_prefix": "",
            "document_prefix": "",
        }
        connection.executemany("INSERT INTO rag_meta(key, value) VALUES (?, ?)", pairs.items())
    for path, (text, title, chunks) in GO_DOCUMENTS.items():
        digest = hashlib.sha256(text.encode()).hexdigest()
        (document_id,) = connection.execute(
            "INSERT INTO documents(path, title, mtime, hash) VALUES (?, ?, ?, ?) RETURNING id",
            (path, title, GO_MTIME_SECONDS, digest),
        ).fetchone()
        for ordinal, (heading, body, vector) in enumerate(chunks):
            (chunk_id,) = connection.execute(
                "INSERT INTO chunks(document_id, heading_path, ordinal, body) "
                "VALUES (?, ?, ?, ?) RETURNING id",
                (document_id, heading, ordinal, body),
            ).fetchone()
            if hybrid:
                connection.execute(
                    "INSERT INTO chunks_vec(chunk_id, embedding) VALUES (?, ?)",
                    (chunk_id, json.dumps(vector)),
                )
    connection.execute("COMMIT")
    connection.close()
    database.chmod(0o600)
    return directory


@pytest.fixture
def go_store(tmp_path: Path) -> Path:
    return write_go_database(tmp_path / "knowledge" / "docs")


@pytest.fixture
def go_reader(go_store: Path) -> Iterator[KnowledgeReader]:
    reader = KnowledgeReader(go_store)
    assert reader.open(), "the Go database was read as not built"
    yield reader
    reader.close()


def test_a_go_database_is_searched(go_reader: KnowledgeReader) -> None:
    with go_reader.use() as connection:
        answer = search(connection, "ninety days", 5)

    assert answer.status is SearchStatus.OK
    assert [hit.citation for hit in answer.hits] == ["docs/split.md#0"]


def test_a_go_database_is_enumerated_across_chunks(go_reader: KnowledgeReader) -> None:
    with go_reader.use() as connection:
        answer = enumerate_documents(connection, "retention policy")

    assert answer.status is EnumerateStatus.OK
    assert sorted(document.path for document in answer.documents) == [
        "docs/split.md",
        "docs/together.md",
    ]


def test_a_go_database_lists_its_sources_with_go_mtimes(go_reader: KnowledgeReader) -> None:
    with go_reader.use() as connection:
        listed = sources(connection)
        held = counts(connection)

    assert [(source.path, source.chunks, source.mtime) for source in listed] == [
        ("docs/split.md", 2, GO_MTIME_SECONDS),
        ("docs/together.md", 1, GO_MTIME_SECONDS),
    ]
    assert (held.documents, held.chunks) == (2, 3)


def test_a_go_database_after_a_go_reset_opens_by_its_shape(tmp_path: Path) -> None:
    # Go's reset drops and recreates the schema and pins nothing until the next index.
    store = write_go_database(tmp_path / "store", manifest=False)
    reader = KnowledgeReader(store)
    try:
        assert reader.open()
    finally:
        reader.close()


def test_a_hybrid_go_database_is_searched_by_vector(tmp_path: Path) -> None:
    store = write_go_database(tmp_path / "store", hybrid=True)
    reader = KnowledgeReader(store)
    assert reader.open()
    try:
        with reader.use() as connection:
            manifest = check_manifest(
                connection, store / "knowledge.db", Manifest("go-embed", 4, "", ""), writing=False
            )
            assert manifest == Manifest("go-embed", 4, "", "")
            # No word of the question is in the corpus: only the vector finds the chunk.
            answer = search(connection, "zzzz", 1, vector=normalized([0.1, 0.9, 0.0, 0.0]))
    finally:
        reader.close()

    assert [hit.citation for hit in answer.hits] == ["docs/split.md#1"]


def normalized(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(value * value for value in vector))
    return [value / norm for value in vector]


def test_our_writer_adds_a_document_to_a_go_database_and_keeps_its_shape(
    go_store: Path, tmp_path: Path
) -> None:
    docs = tmp_path / "more"
    docs.mkdir()
    (docs / "limits.md").write_text("# Limits\n\nQuotas are per account.\n")

    with KnowledgeWriter(go_store) as writer:
        files = list(walk([str(docs)], go_store))
        index_files(writer, writer.documents(), files, reconcile=False)

    connection = connect(str(go_store / "knowledge.db"))
    try:
        names = {str(row[0]) for row in connection.execute("SELECT name FROM sqlite_master")}
        meta = dict(connection.execute("SELECT key, value FROM rag_meta").fetchall())
        (mtime,) = connection.execute(
            "SELECT mtime FROM documents WHERE path LIKE '%limits.md'"
        ).fetchone()
    finally:
        connection.close()
    # Everything Go's gate requires is still there, so the Go build reads it back.
    assert names >= {
        "documents",
        "chunks",
        "chunks_fts",
        "chunks_fts_exact",
        "chunks_vocab",
        "rag_meta",
        "chunks_ai",
        "chunks_ad",
        "chunks_au",
    }
    assert meta["format_version"] == "2"
    assert mtime == (docs / "limits.md").stat().st_mtime_ns // 1_000_000_000
