"""The knowledge database on disk: where it lives, who may write it, and what shape it has.

One file, ``knowledge.db``, in a directory of its own. The directory is 0700 and the database
0600, created so before SQLite touches them; the modes are asserted again on the database and
its write-ahead log and shared-memory sidecars after every open, and a symlink at any of those
paths is refused rather than followed.

A writer holds a non-blocking exclusive flock on ``knowledge.lock`` for as long as it is open,
so a second writer is refused at once and a crashed one never wedges the next (the kernel drops
the lock with the process). Readers open the file read-only (``mode=ro`` and ``query_only``) and
never take the lock: any number of runs may search while one process indexes.

The format is pinned in the metadata table and checked, with the shape of the tables, whenever
the database is opened; a database of another version or shape is refused in both directions,
and every refusal names the command that rebuilds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import struct
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from fisk_ai.knowledge import DATABASE_NAME, FORMAT_VERSION, LOCK_NAME
from fisk_ai.knowledge.errors import (
    REINDEX_COMMAND,
    FormatMismatch,
    KnowledgeError,
    KnowledgeLocked,
    damaged_index,
)
from fisk_ai.util.fsx import make_private_directories

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "KnowledgePaths",
    "KnowledgeReader",
    "KnowledgeWriter",
    "Manifest",
    "NewChunk",
    "StoredDocument",
    "check_manifest",
    "connect",
    "database_error",
    "read_manifest",
    "stored_documents",
]

_DIRECTORY_MODE = 0o700
_FILE_MODE = 0o600

# Shadow tables FTS5 keeps beside each virtual table; they come and go with their table.
_FTS_SHADOWS = ("_data", "_idx", "_docsize", "_config", "_content")

_SCHEMA = (
    "CREATE TABLE documents ("
    "id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, title TEXT, mtime INTEGER, hash TEXT)",
    "CREATE TABLE chunks ("
    "id INTEGER PRIMARY KEY, "
    "document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE, "
    "heading_path TEXT, ordinal INTEGER, body TEXT NOT NULL)",
    # FTS5 sets the tokenizer per table, so the stemmed and the exact index are two tables over
    # the same rows. Column order matters: bm25 weights are given in it (body 1.0, heading 2.0).
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(body, heading_path, content='chunks', "
    "content_rowid='id', tokenize='porter unicode61')",
    "CREATE VIRTUAL TABLE chunks_fts_exact USING fts5(body, heading_path, content='chunks', "
    "content_rowid='id', tokenize='unicode61')",
    "CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab('chunks_fts_exact', 'row')",
    "CREATE TABLE rag_meta (key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN "
    "INSERT INTO chunks_fts(rowid, body, heading_path) "
    "VALUES (new.id, new.body, new.heading_path); "
    "INSERT INTO chunks_fts_exact(rowid, body, heading_path) "
    "VALUES (new.id, new.body, new.heading_path); END",
    "CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN "
    "INSERT INTO chunks_fts(chunks_fts, rowid, body, heading_path) "
    "VALUES ('delete', old.id, old.body, old.heading_path); "
    "INSERT INTO chunks_fts_exact(chunks_fts_exact, rowid, body, heading_path) "
    "VALUES ('delete', old.id, old.body, old.heading_path); END",
    "CREATE TRIGGER chunks_au AFTER UPDATE ON chunks BEGIN "
    "INSERT INTO chunks_fts(chunks_fts, rowid, body, heading_path) "
    "VALUES ('delete', old.id, old.body, old.heading_path); "
    "INSERT INTO chunks_fts_exact(chunks_fts_exact, rowid, body, heading_path) "
    "VALUES ('delete', old.id, old.body, old.heading_path); "
    "INSERT INTO chunks_fts(rowid, body, heading_path) "
    "VALUES (new.id, new.body, new.heading_path); "
    "INSERT INTO chunks_fts_exact(rowid, body, heading_path) "
    "VALUES (new.id, new.body, new.heading_path); END",
)

# A lookup of a document's chunks in order, which format 2 does not have (the Go original never
# creates it): a writer adds it to any store it opens, and a reader does without it.
_CHUNKS_BY_DOCUMENT = "CREATE INDEX IF NOT EXISTS chunks_document ON chunks(document_id, ordinal)"

# What the gate requires besides the pinned version: every object format 2 has, and the
# columns of the plain tables. Other objects are left alone, as the Go original leaves them.
_OBJECTS = frozenset(
    {
        ("table", "documents"),
        ("table", "chunks"),
        ("table", "chunks_fts"),
        ("table", "chunks_fts_exact"),
        ("table", "chunks_vocab"),
        ("table", "rag_meta"),
        ("trigger", "chunks_ai"),
        ("trigger", "chunks_ad"),
        ("trigger", "chunks_au"),
    }
)
# The vector tier, present only in an index built with embeddings: the sqlite-vec table (its
# shadow tables come and go with it) and the trigger that clears a deleted chunk's vector.
_VECTOR_OBJECTS = frozenset({("table", "chunks_vec"), ("trigger", "chunks_ad_vec")})
_COLUMNS = {
    "documents": ("id", "path", "title", "mtime", "hash"),
    "chunks": ("id", "document_id", "heading_path", "ordinal", "body"),
    "rag_meta": ("key", "value"),
}


def _driver() -> Any:
    # sqlean ships FTS5 and can load extensions, which the interpreter's own sqlite3 cannot
    # here; it is imported on first use so commands that never open the store never load it.
    import sqlean  # type: ignore[import-untyped]

    return sqlean


def database_error() -> type[Exception]:
    """The DB-API base error of the binding, for ``except`` clauses."""
    return cast("type[Exception]", _driver().DatabaseError)


def connect(target: str, *, uri: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode, usable from any thread (each caller serializes), with
    sqlite-vec loaded: always, as the Go original links it in, because deleting a chunk of an
    index built with embeddings fires a trigger into the vector table."""
    import sqlite_vec  # type: ignore[import-untyped]

    connection = _driver().connect(target, uri=uri, isolation_level=None, check_same_thread=False)
    try:
        connection.enable_load_extension(True)
        sqlite_vec.load(connection)
        connection.enable_load_extension(False)
    except BaseException:
        connection.close()
        raise
    return cast("sqlite3.Connection", connection)


@dataclass(frozen=True)
class KnowledgePaths:
    """The files of one knowledge store."""

    directory: Path

    @property
    def database(self) -> Path:
        return self.directory / DATABASE_NAME

    @property
    def lock(self) -> Path:
        return self.directory / LOCK_NAME

    @property
    def sidecars(self) -> tuple[Path, Path]:
        return (
            self.directory / f"{DATABASE_NAME}-wal",
            self.directory / f"{DATABASE_NAME}-shm",
        )

    def refuse_symlinks(self) -> None:
        """Refuse a symlink at the directory, the database or either sidecar."""
        for path in (self.directory, self.database, *self.sidecars):
            if path.is_symlink():
                raise KnowledgeError(
                    f"{path} is a symlink; the knowledge store never follows one, so replace "
                    "it with a real directory or file (or point harness.knowledge.directory "
                    "elsewhere)"
                )

    def assert_modes(self) -> None:
        """Tighten the database and its sidecars to 0600 again (SQLite creates the sidecars
        with the database's mode, but a copy or an editor may have widened them)."""
        self.refuse_symlinks()
        for path in (self.database, *self.sidecars):
            with contextlib.suppress(FileNotFoundError):
                if stat.S_IMODE(path.lstat().st_mode) != _FILE_MODE:
                    path.chmod(_FILE_MODE)

    def built(self) -> bool:
        return self.database.is_file() and not self.database.is_symlink()


def _make_directory(directory: Path) -> None:
    if directory.is_symlink():
        raise KnowledgeError(
            f"{directory} is a symlink; the knowledge store never follows one, so replace it "
            "with a real directory (or point harness.knowledge.directory elsewhere)"
        )
    try:
        make_private_directories(directory)
    except OSError as exc:
        raise KnowledgeError(
            f"cannot create the knowledge directory {directory}: {exc.strerror or exc}"
        ) from None
    if not directory.is_dir():
        raise KnowledgeError(f"{directory} is not a directory; move it or change --store-dir")
    if stat.S_IMODE(directory.stat().st_mode) != _DIRECTORY_MODE:
        directory.chmod(_DIRECTORY_MODE)


def _create_database_file(path: Path) -> None:
    """Create the database empty at 0600 before SQLite opens it, so it is never readable by
    others, even for a moment."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        os.close(os.open(path, flags, _FILE_MODE))
    except FileExistsError:
        return


def _objects(connection: sqlite3.Connection) -> set[tuple[str, str]]:
    rows = connection.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    ).fetchall()
    found: set[tuple[str, str]] = set()
    for kind, raw_name in rows:
        name = str(raw_name)
        if name.startswith("chunks_fts") and name.endswith(_FTS_SHADOWS):
            continue
        if name.startswith("chunks_vec_"):
            continue
        found.add((str(kind), name))
    return found


def _columns(connection: sqlite3.Connection, table: str) -> tuple[str, ...]:
    rows = connection.execute(f"PRAGMA table_info({table})").fetchall()
    return tuple(str(row[1]) for row in rows)


def check_format(connection: sqlite3.Connection, database: Path) -> bool:
    """Whether the database holds a store of this format; False when it holds nothing at all.

    Raises FormatMismatch, naming the command that rebuilds it, for another version or a shape
    format 2 does not have: a required table, trigger or column missing, a column too many, or
    half a vector tier. The pinned version and the shape are checked separately: a store whose
    metadata was emptied (the Go original's reset leaves it so) is read by its shape alone.
    """
    objects = _objects(connection)
    if not objects:
        return False
    version: str | None = None
    if ("table", "rag_meta") in objects:
        row = connection.execute(
            "SELECT value FROM rag_meta WHERE key = 'format_version'"
        ).fetchone()
        version = str(row[0]) if row is not None else None
    if version is not None and version != str(FORMAT_VERSION):
        newer = version.isdigit() and int(version) > FORMAT_VERSION
        if newer:
            raise FormatMismatch(
                f"{database} has knowledge format version {version}, newer than the version "
                f"{FORMAT_VERSION} this fisk-ai reads; upgrade fisk-ai, or rebuild the index "
                f"for this version with `{REINDEX_COMMAND}`"
            )
        raise FormatMismatch(
            f"{database} has knowledge format version {version}, older than the version "
            f"{FORMAT_VERSION} this fisk-ai reads; rebuild it with `{REINDEX_COMMAND}`"
        )
    vector_objects = objects & _VECTOR_OBJECTS
    shape_ok = (
        objects >= _OBJECTS
        and vector_objects in (frozenset(), _VECTOR_OBJECTS)
        and all(_columns(connection, table) == columns for table, columns in _COLUMNS.items())
    )
    if not shape_ok:
        raise FormatMismatch(
            f"{database} does not have the tables of knowledge format version {FORMAT_VERSION}; "
            f"rebuild it with `{REINDEX_COMMAND}`"
        )
    return True


@dataclass(frozen=True)
class Manifest:
    """What the vector tier of an index was built with; a search must embed the same way."""

    model: str
    dimension: int
    query_prefix: str
    document_prefix: str
    normalized: bool = True


def read_manifest(connection: sqlite3.Connection) -> Manifest | None:
    """The embedding manifest, or None for an index without a vector tier."""
    rows = dict(
        connection.execute(
            "SELECT key, value FROM rag_meta",
        ).fetchall()
    )
    has_table = (
        connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunks_vec'"
        ).fetchone()
        is not None
    )
    if not rows.get("model") or not has_table:
        return None
    dimension = str(rows.get("dimension") or "")
    return Manifest(
        model=str(rows["model"]),
        dimension=int(dimension) if dimension.isdigit() else 0,
        query_prefix=str(rows.get("query_prefix") or ""),
        document_prefix=str(rows.get("document_prefix") or ""),
        normalized=rows.get("normalized") == "true",
    )


def _has_chunks(connection: sqlite3.Connection) -> bool:
    return connection.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None


def check_manifest(
    connection: sqlite3.Connection,
    database: Path,
    wanted: Manifest | None,
    *,
    writing: bool,
) -> Manifest | None:
    """Compare the index's vector tier with the configuration (``wanted``: the configured
    model and prefixes, dimension 0 when unknown); the manifest it holds.

    Refused, naming ``--reindex``: a model or prefix other than the manifest's, a manifest not
    normalized, a lexical index holding chunks when embeddings are configured, and (for a
    writer only, which would store chunks without vectors) a vector tier the configuration no
    longer asks for. A reader of that last index searches its lexical tier.
    """
    manifest = read_manifest(connection)
    key = "harness.knowledge.embeddings"
    if wanted is None:
        if manifest is not None and writing:
            raise FormatMismatch(
                f"{database} holds vectors of the embeddings model {manifest.model} but {key} "
                f"is not configured; configure it again, or rebuild the index lexical-only "
                f"with `{REINDEX_COMMAND}`"
            )
        return manifest
    if manifest is None:
        if _has_chunks(connection):
            raise FormatMismatch(
                f"{database} was indexed without embeddings but {key} is configured; build "
                f"the vector tier with `{REINDEX_COMMAND}`"
            )
        return None
    for field, label in (
        ("model", "model"),
        ("query_prefix", "query_prefix"),
        ("document_prefix", "document_prefix"),
    ):
        have, want = getattr(manifest, field), getattr(wanted, field)
        if have != want:
            raise FormatMismatch(
                f"{database} was indexed with embeddings {label} {have!r} but {key}.{label} "
                f"is {want!r}; vectors of two settings cannot be compared, so rebuild the "
                f"index with `{REINDEX_COMMAND}`"
            )
    if not manifest.normalized or manifest.dimension <= 0:
        raise FormatMismatch(
            f"{database} has an embeddings manifest this fisk-ai does not write (normalized "
            f"vectors of a known dimension); rebuild it with `{REINDEX_COMMAND}`"
        )
    if wanted.dimension and wanted.dimension != manifest.dimension:
        raise FormatMismatch(
            f"{database} holds {manifest.dimension}-dimension vectors but {wanted.model} now "
            f"answers with {wanted.dimension}; rebuild the index with `{REINDEX_COMMAND}`"
        )
    return manifest


def vector_blob(vector: Sequence[float]) -> bytes:
    """A vector as sqlite-vec reads it: little-endian float32."""
    return struct.pack(f"<{len(vector)}f", *vector)


@dataclass(frozen=True)
class NewChunk:
    """A chunk to store: its heading breadcrumb ("" at the top of a file) and its body."""

    heading_path: str
    body: str


@dataclass(frozen=True)
class StoredDocument:
    """A document as the index holds it."""

    id: int
    path: str
    mtime: int
    hash: str
    chunks: int


def stored_documents(connection: sqlite3.Connection) -> dict[str, StoredDocument]:
    """Every indexed document by path, with its hash and chunk count."""
    rows = connection.execute(
        "SELECT d.id, d.path, d.mtime, d.hash, "
        "(SELECT count(*) FROM chunks c WHERE c.document_id = d.id) FROM documents d"
    ).fetchall()
    return {
        str(path): StoredDocument(int(id_), str(path), int(mtime or 0), str(digest), int(chunks))
        for id_, path, mtime, digest, chunks in rows
    }


class KnowledgeWriter:
    """The one writer of a store: holds the lock from open to close. Not thread-safe; every
    call runs on the caller's thread.

    ``rebuild`` drops whatever the database holds, of any format, and starts it empty: what
    ``--reindex`` and ``reset`` do, and the way out of a format refusal.
    """

    def __init__(self, directory: Path, *, rebuild: bool = False) -> None:
        self.paths = KnowledgePaths(directory)
        self._rebuild = rebuild
        self._lock_fd = -1
        self._connection: sqlite3.Connection | None = None

    def __enter__(self) -> KnowledgeWriter:
        self.open()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def open(self) -> None:
        paths = self.paths
        _make_directory(paths.directory)
        paths.refuse_symlinks()
        self._take_lock()
        try:
            try:
                self._open_database()
            except database_error() as exc:
                if not self._rebuild:
                    raise damaged_index(paths.database, str(exc)) from None
                # --reindex and reset start the store empty whatever it holds, so a database
                # SQLite cannot read is replaced rather than dropped table by table.
                self._discard_database()
                self._open_database()
            paths.assert_modes()
        except BaseException:
            self.close()
            raise

    def _discard_database(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._connection.close()
            self._connection = None
        for path in (self.paths.database, *self.paths.sidecars):
            path.unlink(missing_ok=True)

    def _open_database(self) -> None:
        paths = self.paths
        _create_database_file(paths.database)
        paths.refuse_symlinks()
        connection = connect(str(paths.database))
        self._connection = connection
        # auto_vacuum takes effect only before the first table is created.
        connection.execute("PRAGMA auto_vacuum = FULL")
        connection.execute("PRAGMA journal_mode = WAL")
        # In WAL mode NORMAL never corrupts the database; a power loss can cost the last
        # documents indexed, which the next index pass puts back. FULL would fsync every
        # document's transaction.
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("PRAGMA busy_timeout = 5000")
        connection.execute("PRAGMA foreign_keys = ON")
        if self._rebuild:
            self.reset()
        elif not check_format(connection, paths.database):
            self._create_schema()
        else:
            self._complete_schema()

    def _take_lock(self) -> None:
        lock = self.paths.lock
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(lock, flags, _FILE_MODE)
        except OSError as exc:
            raise KnowledgeError(
                f"cannot open the lock file {lock}: {exc.strerror or exc}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise KnowledgeLocked(
                f"another knowledge writer holds {lock} (an index, watch or reset in another "
                "process); wait for it to finish and try again"
            ) from None
        self._lock_fd = fd

    def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._connection.close()
            self._connection = None
            with contextlib.suppress(OSError, KnowledgeError):
                self.paths.assert_modes()
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1

    @property
    def connection(self) -> sqlite3.Connection:
        if self._connection is None:
            raise RuntimeError("the knowledge writer is not open")
        return self._connection

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        connection = self.connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def _create_schema(self) -> None:
        with self.transaction() as connection:
            for statement in _SCHEMA:
                connection.execute(statement)
            self._pin_format(connection)

    def _complete_schema(self) -> None:
        """Add what this project writes beyond format 2 to a store another writer made (the Go
        original, or a reset that emptied the metadata): the chunk lookup and the pinned
        version."""
        with self.transaction() as connection:
            self._pin_format(connection)

    @staticmethod
    def _pin_format(connection: sqlite3.Connection) -> None:
        connection.execute(_CHUNKS_BY_DOCUMENT)
        connection.execute(
            "INSERT OR IGNORE INTO rag_meta(key, value) VALUES ('format_version', ?)",
            (str(FORMAT_VERSION),),
        )

    def reset(self) -> None:
        """Drop every object and create the schema afresh. Dropping fires no row triggers, so
        this works on an index whose FTS tables no longer match their content."""
        connection = self.connection
        rows = connection.execute(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
            "AND type IN ('table', 'view', 'trigger', 'index')"
        ).fetchall()
        connection.execute("PRAGMA foreign_keys = OFF")
        try:
            with self.transaction():
                for kind, name in rows:
                    if kind == "trigger":
                        connection.execute(f'DROP TRIGGER IF EXISTS "{name}"')
                for kind, name in rows:
                    if kind == "view":
                        connection.execute(f'DROP VIEW IF EXISTS "{name}"')
                # Virtual tables first: dropping one drops its shadow tables with it.
                names = [str(name) for kind, name in rows if kind == "table"]
                shadow = ("chunks_fts_", "chunks_vec_")
                for name in sorted(names, key=lambda n: (n.startswith(shadow), n)):
                    exists = connection.execute(
                        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
                    ).fetchone()
                    if exists is not None:
                        connection.execute(f'DROP TABLE IF EXISTS "{name}"')
        finally:
            connection.execute("PRAGMA foreign_keys = ON")
        self._create_schema()
        connection.execute("VACUUM")

    def documents(self) -> dict[str, StoredDocument]:
        return stored_documents(self.connection)

    def plan_vectors(self, wanted: Manifest | None) -> Manifest | None:
        """Reconcile the vector tier with the configuration before anything is written: create
        the tier (table, trigger, manifest) on an index holding no chunks, refuse a mismatch
        naming ``--reindex``. ``wanted.dimension`` is the live model's, probed by the caller."""
        manifest = check_manifest(self.connection, self.paths.database, wanted, writing=True)
        if wanted is None or manifest is not None:
            return manifest
        with self.transaction() as connection:
            connection.execute(
                "CREATE VIRTUAL TABLE chunks_vec USING vec0(chunk_id INTEGER PRIMARY KEY, "
                f"embedding FLOAT[{int(wanted.dimension)}] distance_metric=cosine)"
            )
            connection.execute(
                "CREATE TRIGGER chunks_ad_vec AFTER DELETE ON chunks BEGIN "
                "DELETE FROM chunks_vec WHERE chunk_id = old.id; END"
            )
            connection.executemany(
                "INSERT OR REPLACE INTO rag_meta(key, value) VALUES (?, ?)",
                [
                    ("model", wanted.model),
                    ("dimension", str(wanted.dimension)),
                    ("normalized", "true"),
                    ("query_prefix", wanted.query_prefix),
                    ("document_prefix", wanted.document_prefix),
                ],
            )
        return wanted

    def replace_document(
        self,
        path: str,
        *,
        title: str,
        mtime: int,
        digest: str,
        chunks: Sequence[NewChunk],
        vectors: Sequence[Sequence[float]] | None = None,
    ) -> None:
        """Store one document's chunks (and their vectors, in chunk order, when the index has a
        vector tier) in place of what it had, in one short transaction."""
        if vectors is not None and len(vectors) != len(chunks):
            raise ValueError(f"{len(vectors)} vectors for {len(chunks)} chunks of {path}")
        with self.transaction() as connection:
            connection.execute(
                "INSERT INTO documents(path, title, mtime, hash) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(path) DO UPDATE SET title = excluded.title, "
                "mtime = excluded.mtime, hash = excluded.hash",
                (path, title, mtime, digest),
            )
            row = connection.execute("SELECT id FROM documents WHERE path = ?", (path,)).fetchone()
            document_id = int(row[0])
            # The delete trigger clears both FTS tables, so a shrinking file leaves no ghosts.
            connection.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
            connection.executemany(
                "INSERT INTO chunks(document_id, heading_path, ordinal, body) VALUES (?, ?, ?, ?)",
                [
                    (document_id, chunk.heading_path, ordinal, chunk.body)
                    for ordinal, chunk in enumerate(chunks)
                ],
            )
            if vectors:
                ids = connection.execute(
                    "SELECT id FROM chunks WHERE document_id = ? ORDER BY ordinal", (document_id,)
                ).fetchall()
                connection.executemany(
                    "INSERT INTO chunks_vec(chunk_id, embedding) VALUES (?, ?)",
                    [
                        (int(row[0]), vector_blob(vector))
                        for row, vector in zip(ids, vectors, strict=True)
                    ],
                )

    def remove_documents(self, paths: Sequence[str]) -> int:
        """Remove documents by path (their chunks go with them); how many were there."""
        removed = 0
        with self.transaction() as connection:
            for path in paths:
                row = connection.execute(
                    "SELECT id FROM documents WHERE path = ?", (path,)
                ).fetchone()
                if row is None:
                    continue
                connection.execute("DELETE FROM chunks WHERE document_id = ?", (row[0],))
                connection.execute("DELETE FROM documents WHERE id = ?", (row[0],))
                removed += 1
        return removed

    def rebuild(self) -> None:
        """Re-derive both full-text indexes from the chunks table."""
        with self.transaction() as connection:
            connection.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
            connection.execute("INSERT INTO chunks_fts_exact(chunks_fts_exact) VALUES ('rebuild')")

    def integrity_problems(self) -> list[str]:
        """Check both full-text indexes against the chunks table. Only the rank form of the
        check catches an index that drifted from its content, and it is a write, so it needs
        the writer."""
        problems: list[str] = []
        checks = {
            "chunks_fts": "INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)",
            "chunks_fts_exact": "INSERT INTO chunks_fts_exact(chunks_fts_exact, rank) "
            "VALUES ('integrity-check', 1)",
        }
        for table, statement in checks.items():
            try:
                self.connection.execute(statement)
            except database_error() as exc:
                problems.append(f"{table}: {exc}")
        return problems


class KnowledgeReader:
    """A read-only view of a store, shared by every run of a host. Calls are serialized on one
    connection; each statement runs in autocommit, so no snapshot is held between calls and a
    writer's checkpoints are never blocked by an idle reader."""

    def __init__(self, directory: Path) -> None:
        self.paths = KnowledgePaths(directory)
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def open(self) -> bool:
        """Open the database if it exists; False when no index has been built yet. A database
        of another format is refused here."""
        if self._connection is not None:
            return True
        paths = self.paths
        paths.refuse_symlinks()
        if not paths.built():
            return False
        uri = f"file:{paths.database}?mode=ro"
        connection = connect(uri, uri=True)
        try:
            connection.execute("PRAGMA query_only = 1")
            connection.execute("PRAGMA busy_timeout = 5000")
            if not check_format(connection, paths.database):
                connection.close()
                return False
        except database_error() as exc:
            connection.close()
            raise damaged_index(paths.database, str(exc)) from None
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        return True

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    @contextlib.contextmanager
    def use(self) -> Iterator[sqlite3.Connection]:
        """The connection, held by one caller at a time."""
        with self._lock:
            if self._connection is None:
                raise RuntimeError("the knowledge reader is not open")
            try:
                yield self._connection
            except database_error() as exc:
                raise damaged_index(self.paths.database, str(exc)) from None
