"""Reading the index: ranked search, set enumeration, one chunk by citation, and the counts.

Every function takes an open connection (a reader's or the writer's) and blocks; async callers
run them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fisk_ai.knowledge.errors import KnowledgeError
from fisk_ai.knowledge.query import (
    WORD,
    EnumerateQuery,
    Scope,
    SearchQuery,
    Term,
    parse_enumerate,
    search_query,
)

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "LEXICAL_TIER",
    "RRF_K",
    "TOP_K_CEILING",
    "EnumerateAnswer",
    "EnumerateStatus",
    "Hit",
    "IndexCounts",
    "MatchedDocument",
    "SearchAnswer",
    "SearchStatus",
    "Source",
    "TermReport",
    "chunk_at",
    "chunks_around",
    "citation",
    "counts",
    "degraded_tier",
    "enumerate_documents",
    "hybrid_tier",
    "matched_spans",
    "parse_citation",
    "search",
    "sources",
    "vocabulary",
]

LEXICAL_TIER = "tier: lexical (FTS5) - no embeddings configured"
ENUMERATE_TIER = "tier: lexical (FTS5) - matching is complete, never ranked"
TOP_K_CEILING = 20
# Each tier hands fusion this many candidates; reciprocal rank fusion adds 1 / (RRF_K + rank)
# per list a chunk appears in (rank 1-based), ties broken by chunk id.
CANDIDATES = 50
RRF_K = 60


def hybrid_tier(model: str, dimension: int) -> str:
    return f"tier: hybrid (FTS5 + vectors, RRF) - model={model} dim={dimension}"


def degraded_tier(reason: str) -> str:
    return f"tier: hybrid -> DEGRADED to lexical (embeddings unreachable: {reason})"


_RELATED_FORMS = 10
_RELATED_CANDIDATES = 200


class SearchStatus(enum.Enum):
    OK = "ok"
    INDEX_NOT_BUILT = "index_not_built"
    INDEX_EMPTY = "index_empty"


class EnumerateStatus(enum.Enum):
    OK = "ok"
    INDEX_NOT_BUILT = "index_not_built"
    CORPUS_EMPTY = "corpus_empty"
    QUERY_EMPTY = "query_empty"


def citation(path: str, ordinal: int) -> str:
    """How a chunk is cited: its document's path and its 0-based ordinal, ``docs/a.md#3``."""
    return f"{path}#{ordinal}"


def parse_citation(text: str) -> tuple[str, int]:
    """The path and ordinal of a citation; the last ``#`` separates them, so a path may hold
    one."""
    path, separator, ordinal = text.rpartition("#")
    if not separator or not path or not ordinal.isdigit():
        raise KnowledgeError(
            f'"{text}" is not a knowledge citation; write the document path and the chunk '
            "number as search prints them, for example docs/install.md#2"
        )
    return path, int(ordinal)


@dataclass(frozen=True)
class Hit:
    path: str
    ordinal: int
    heading_path: str
    body: str
    score: float

    @property
    def citation(self) -> str:
        return citation(self.path, self.ordinal)


@dataclass(frozen=True)
class SearchAnswer:
    status: SearchStatus
    hits: tuple[Hit, ...]
    query: SearchQuery
    tier: str = LEXICAL_TIER
    # Why the vector tier did not answer, when it was configured and failed ("" otherwise).
    degraded: str = ""


@dataclass(frozen=True)
class IndexCounts:
    documents: int
    chunks: int


def counts(connection: sqlite3.Connection) -> IndexCounts:
    documents = connection.execute("SELECT count(*) FROM documents").fetchone()[0]
    chunks = connection.execute("SELECT count(*) FROM chunks").fetchone()[0]
    return IndexCounts(int(documents), int(chunks))


def _has_chunks(connection: sqlite3.Connection) -> bool:
    return connection.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None


def search(
    connection: sqlite3.Connection,
    text: str,
    top_k: int,
    *,
    vector: Sequence[float] | None = None,
) -> SearchAnswer:
    """The ``top_k`` chunks (1 to 20) best matching any word of ``text``, by BM25 with headings
    weighted twice; with the query's ``vector``, the BM25 and nearest-vector rankings fused."""
    query = search_query(text)
    if not _has_chunks(connection):
        return SearchAnswer(SearchStatus.INDEX_EMPTY, (), query)
    limit = max(1, min(top_k, TOP_K_CEILING))
    if vector is not None:
        return SearchAnswer(SearchStatus.OK, _hybrid(connection, query, vector, limit), query)
    if not query.expression:
        return SearchAnswer(SearchStatus.OK, (), query)
    # Rank inside FTS5 first and join only the top rows: joining every match before the sort
    # costs a row lookup per match. Headings count twice a body word; the weights follow the
    # FTS column order (body, heading_path).
    rows = connection.execute(
        "SELECT d.path, c.ordinal, c.heading_path, c.body, ranked.score FROM ("
        "SELECT rowid AS id, bm25(chunks_fts, 1.0, 2.0) AS score FROM chunks_fts "
        "WHERE chunks_fts MATCH ? ORDER BY score, rowid LIMIT ?) AS ranked "
        "JOIN chunks c ON c.id = ranked.id JOIN documents d ON d.id = c.document_id "
        "ORDER BY ranked.score, ranked.id",
        (query.expression, limit),
    ).fetchall()
    hits = tuple(
        Hit(str(path), int(ordinal), str(heading or ""), str(body), float(score))
        for path, ordinal, heading, body, score in rows
    )
    return SearchAnswer(SearchStatus.OK, hits, query)


def _hybrid(
    connection: sqlite3.Connection, query: SearchQuery, vector: Sequence[float], limit: int
) -> tuple[Hit, ...]:
    from fisk_ai.knowledge.store import vector_blob

    rankings: list[list[int]] = []
    if query.expression:
        rows = connection.execute(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? "
            "ORDER BY bm25(chunks_fts, 1.0, 2.0), rowid LIMIT ?",
            (query.expression, CANDIDATES),
        ).fetchall()
        rankings.append([int(row[0]) for row in rows])
    rows = connection.execute(
        "SELECT chunk_id FROM chunks_vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (vector_blob(vector), CANDIDATES),
    ).fetchall()
    rankings.append([int(row[0]) for row in rows])
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking, 1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (RRF_K + rank)
    chosen = sorted(fused, key=lambda chunk_id: (-fused[chunk_id], chunk_id))[:limit]
    if not chosen:
        return ()
    marks = ",".join("?" * len(chosen))
    rows = connection.execute(
        "SELECT c.id, d.path, c.ordinal, c.heading_path, c.body FROM chunks c "  # noqa: S608
        f"JOIN documents d ON d.id = c.document_id WHERE c.id IN ({marks})",
        chosen,
    ).fetchall()
    found = {int(row[0]): row for row in rows}
    # A chunk a concurrent reindex removed between fusion and here is skipped, not an error.
    return tuple(
        Hit(str(row[1]), int(row[2]), str(row[3] or ""), str(row[4]), fused[chunk_id])
        for chunk_id in chosen
        if (row := found.get(chunk_id)) is not None
    )


def chunk_at(connection: sqlite3.Connection, path: str, ordinal: int) -> tuple[Hit, int] | None:
    """The chunk a citation names and how many chunks its document has, or None."""
    row = connection.execute(
        "SELECT c.heading_path, c.body, "
        "(SELECT count(*) FROM chunks k WHERE k.document_id = d.id) "
        "FROM documents d JOIN chunks c ON c.document_id = d.id "
        "WHERE d.path = ? AND c.ordinal = ?",
        (path, ordinal),
    ).fetchone()
    if row is None:
        return None
    return Hit(path, ordinal, str(row[0] or ""), str(row[1]), 0.0), int(row[2])


def chunks_around(
    connection: sqlite3.Connection, path: str, ordinal: int, radius: int
) -> tuple[tuple[Hit, ...], int] | None:
    """The chunk a citation names with up to ``radius`` chunks of the same document on each
    side, in document order, and how many chunks the document has; None when the citation
    names no chunk."""
    found = chunk_at(connection, path, ordinal)
    if found is None:
        return None
    rows = connection.execute(
        "SELECT c.ordinal, c.heading_path, c.body FROM documents d "
        "JOIN chunks c ON c.document_id = d.id "
        "WHERE d.path = ? AND c.ordinal BETWEEN ? AND ? ORDER BY c.ordinal",
        (path, ordinal - radius, ordinal + radius),
    ).fetchall()
    hits = tuple(Hit(path, int(row[0]), str(row[1] or ""), str(row[2]), 0.0) for row in rows)
    return hits, found[1]


def matched_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Where the stemmed index would match any of ``terms`` in ``text``: the start and end of
    each word whose porter stem is a term's, in order."""
    words = [(match.start(), match.end(), match.group().lower()) for match in WORD.finditer(text)]
    if not words or not terms:
        return []
    distinct = sorted({word for _, _, word in words} | {term.lower() for term in terms})
    stem_of = dict(zip(distinct, _stems(distinct), strict=True))
    wanted = {stem_of[term.lower()] for term in terms} - {""}
    return [(start, end) for start, end, word in words if stem_of[word] in wanted]


@dataclass(frozen=True)
class Source:
    path: str
    title: str
    chunks: int
    mtime: int


def sources(connection: sqlite3.Connection) -> list[Source]:
    rows = connection.execute(
        "SELECT d.path, d.title, "
        "(SELECT count(*) FROM chunks c WHERE c.document_id = d.id), d.mtime "
        "FROM documents d ORDER BY d.path"
    ).fetchall()
    return [Source(str(r[0]), str(r[1] or ""), int(r[2]), int(r[3] or 0)) for r in rows]


@dataclass(frozen=True)
class MatchedDocument:
    path: str
    body_matches: int
    heading_matches: int
    total_chunks: int


@dataclass(frozen=True)
class TermReport:
    """What one term found: how many documents hold it (with stemming) and how many hold it as
    written; other real words sharing its stem; or why it was not queried."""

    term: str
    documents: int
    as_written: int
    related_forms: tuple[str, ...] = ()
    not_queried: str = ""


@dataclass(frozen=True)
class EnumerateAnswer:
    status: EnumerateStatus
    query: EnumerateQuery
    documents: tuple[MatchedDocument, ...]
    terms: tuple[TermReport, ...]
    indexed_documents: int


_DOCUMENT_SETS = {
    "chunks_fts": "SELECT DISTINCT c.document_id FROM chunks_fts "
    "JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ?",
    "chunks_fts_exact": "SELECT DISTINCT c.document_id FROM chunks_fts_exact "
    "JOIN chunks c ON c.id = chunks_fts_exact.rowid WHERE chunks_fts_exact MATCH ?",
}


def _document_set(connection: sqlite3.Connection, table: str, expression: str) -> set[int]:
    rows = connection.execute(_DOCUMENT_SETS[table], (expression,)).fetchall()
    return {int(row[0]) for row in rows}


def _chunk_counts(
    connection: sqlite3.Connection, column: str, terms: Iterable[Term]
) -> dict[int, int]:
    """Per document, the chunks whose ``column`` matches any of ``terms``."""
    wanted = Scope.HEADING if column == "heading_path" else Scope.BODY
    phrases = [
        f"{column} : {term.phrase_expression()}"
        for term in terms
        if term.scope in (Scope.ANY, wanted)
    ]
    if not phrases:
        return {}
    rows = connection.execute(
        "SELECT c.document_id, count(*) FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
        "WHERE chunks_fts MATCH ? GROUP BY c.document_id",
        (" OR ".join(phrases),),
    ).fetchall()
    return {int(document): int(count) for document, count in rows}


def _stems(words: Sequence[str]) -> list[str]:
    """Each word's porter stem, computed by SQLite's own tokenizer in a scratch database, so
    the stems are the index's and never a second implementation's."""
    from fisk_ai.knowledge.store import connect

    scratch = connect(":memory:")
    try:
        scratch.execute("CREATE VIRTUAL TABLE words USING fts5(word, tokenize='porter unicode61')")
        scratch.execute("CREATE VIRTUAL TABLE stems USING fts5vocab(words, instance)")
        scratch.executemany("INSERT INTO words(rowid, word) VALUES (?, ?)", enumerate(words, 1))
        found = dict(scratch.execute("SELECT doc, term FROM stems WHERE offset = 0").fetchall())
    finally:
        scratch.close()
    return [str(found.get(index, "")) for index in range(1, len(words) + 1)]


def _related_forms(connection: sqlite3.Connection, word: str) -> tuple[str, ...]:
    """Other words of the corpus that stem like ``word``."""
    lowered = word.lower()
    stem = _stems([lowered])[0]
    if not stem:
        return ()
    # Porter mostly strips suffixes, so words sharing a stem mostly share all but its last
    # letter; those are the candidates, and the real stems decide.
    prefix = stem[:-1] if len(stem) > 3 else stem
    rows = connection.execute(
        "SELECT term FROM chunks_vocab WHERE term >= ? AND term < ? ORDER BY doc DESC LIMIT ?",
        (prefix, prefix + "\U0010ffff", _RELATED_CANDIDATES),
    ).fetchall()
    candidates = [str(row[0]) for row in rows if str(row[0]) != lowered]
    if not candidates:
        return ()
    stems = _stems(candidates)
    related = sorted(c for c, s in zip(candidates, stems, strict=True) if s == stem)
    return tuple(related[:_RELATED_FORMS])


def _term_report(connection: sqlite3.Connection, term: Term, found: set[int]) -> TermReport:
    if not term.queried:
        return TermReport(term.written, 0, 0, not_queried="shorter than two letters or digits")
    exact = _document_set(connection, "chunks_fts_exact", term.expression())
    related = (
        () if term.phrase or len(term.words) != 1 else _related_forms(connection, term.words[0])
    )
    return TermReport(term.written, len(found), len(exact), related_forms=related)


def enumerate_documents(connection: sqlite3.Connection, text: str) -> EnumerateAnswer:
    """Every document holding all the query's terms and none of its excluded ones, each term
    matched anywhere in the document; unranked, ordered by how many chunks match (body first,
    then heading) and then by path."""
    query = parse_enumerate(text)
    indexed = int(connection.execute("SELECT count(*) FROM documents").fetchone()[0])
    if indexed == 0 or not _has_chunks(connection):
        return EnumerateAnswer(EnumerateStatus.CORPUS_EMPTY, query, (), (), indexed)
    if query.empty:
        reports = tuple(_term_report(connection, term, set()) for term in query.terms)
        return EnumerateAnswer(EnumerateStatus.QUERY_EMPTY, query, (), reports, indexed)

    sets = {
        term: _document_set(connection, "chunks_fts", term.expression())
        for term in (*query.included, *query.excluded)
    }
    if query.included:
        matched = set.intersection(*(sets[term] for term in query.included))
    else:
        rows = connection.execute("SELECT id FROM documents").fetchall()
        matched = {int(row[0]) for row in rows}
    for term in query.excluded:
        matched -= sets[term]

    body = _chunk_counts(connection, "body", query.included)
    heading = _chunk_counts(connection, "heading_path", query.included)
    documents: list[MatchedDocument] = []
    if matched:
        rows = connection.execute(
            "SELECT d.id, d.path, (SELECT count(*) FROM chunks c WHERE c.document_id = d.id) "
            "FROM documents d"
        ).fetchall()
        for document_id, path, total in rows:
            if int(document_id) in matched:
                documents.append(
                    MatchedDocument(
                        str(path),
                        body.get(int(document_id), 0),
                        heading.get(int(document_id), 0),
                        int(total),
                    )
                )
    documents.sort(key=lambda d: (-d.body_matches, -d.heading_matches, d.path))
    reports = tuple(_term_report(connection, term, sets.get(term, set())) for term in query.terms)
    return EnumerateAnswer(EnumerateStatus.OK, query, tuple(documents), reports, indexed)


@dataclass(frozen=True)
class Word:
    """A word of the corpus as written (the exact index), its porter stem, and how many
    documents and chunks hold it (in the field asked for)."""

    word: str
    stem: str
    documents: int
    chunks: int


def vocabulary(
    connection: sqlite3.Connection,
    pattern: str = "",
    *,
    field: str | None = None,
    min_docs: int = 1,
    max_docs: int = 0,
) -> list[Word]:
    """The words holding ``pattern`` (case-insensitive substring), most documents first.
    ``field`` is ``body`` or ``heading`` to count one part of each chunk; ``max_docs`` 0 means
    no ceiling."""
    column = {"body": "body", "heading": "heading_path"}.get(field or "")
    terms = [
        str(row[0])
        for row in connection.execute(
            "SELECT term FROM chunks_vocab WHERE instr(term, ?) > 0 ORDER BY term",
            (pattern.lower(),),
        ).fetchall()
    ]
    found: list[tuple[str, int, int]] = []
    for term in terms:
        phrase = '"' + term.replace('"', '""') + '"'
        expression = f"{column} : {phrase}" if column else phrase
        chunks, documents = connection.execute(
            "SELECT count(*), count(DISTINCT c.document_id) FROM chunks_fts_exact "
            "JOIN chunks c ON c.id = chunks_fts_exact.rowid WHERE chunks_fts_exact MATCH ?",
            (expression,),
        ).fetchone()
        if int(documents) < min_docs or (max_docs and int(documents) > max_docs):
            continue
        found.append((term, int(documents), int(chunks)))
    stems = _stems([term for term, _, _ in found]) if found else []
    words = [
        Word(term, stem or term, documents, chunks)
        for (term, documents, chunks), stem in zip(found, stems, strict=True)
    ]
    words.sort(key=lambda word: (-word.documents, word.word))
    return words
