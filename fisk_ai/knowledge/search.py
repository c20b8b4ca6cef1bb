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

    from fisk_ai.knowledge.embeddings import DegradeReason

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
    "score_text",
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


def degraded_tier(reason: DegradeReason) -> str:
    return f"tier: hybrid -> DEGRADED to lexical (embeddings unreachable: {reason})"


_RELATED_FORMS = 5


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
    # Why the vector tier did not answer, when it was configured and failed.
    degraded: DegradeReason | None = None
    # Whether the hits were fused from both tiers (their scores are then reciprocal-rank sums).
    fused: bool = False


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
        hits = _hybrid(connection, query, vector, limit)
        return SearchAnswer(SearchStatus.OK, hits, query, fused=True)
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


def score_text(answer: SearchAnswer, hit: Hit) -> str:
    """A hit's score as every surface prints it, higher always better: the fused
    reciprocal-rank sum of a hybrid search, or BM25 with its sign turned (FTS5 ranks best as
    most negative)."""
    if answer.fused:
        return f"rrf {hit.score:.4f}"
    return f"score {-hit.score:.2f}"


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
    """One document of an enumeration: its path, how many of its chunks match in the body and
    in the heading, and the ordinal of its first matching chunk, which its citation names."""

    path: str
    body_matches: int
    heading_matches: int
    total_chunks: int
    first_match: int = 0

    @property
    def citation(self) -> str:
        return citation(self.path, self.first_match)


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
# Per document, over the chunks an expression matches: how many, and the first one's ordinal.
_PER_DOCUMENT = {
    aggregate: f"SELECT c.document_id, {aggregate} FROM chunks_fts "  # noqa: S608
    "JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ? GROUP BY c.document_id"
    for aggregate in ("count(*)", "min(c.ordinal)")
}


def _document_set(connection: sqlite3.Connection, table: str, expression: str) -> set[int]:
    rows = connection.execute(_DOCUMENT_SETS[table], (expression,)).fetchall()
    return {int(row[0]) for row in rows}


def _per_document(
    connection: sqlite3.Connection, aggregate: str, expression: str
) -> dict[int, int]:
    rows = connection.execute(_PER_DOCUMENT[aggregate], (expression,)).fetchall()
    return {int(document): int(value) for document, value in rows}


def _chunk_counts(
    connection: sqlite3.Connection, column: str, terms: Iterable[Term]
) -> dict[int, int]:
    """Per document, the chunks whose ``column`` matches any of ``terms``."""
    wanted = Scope.HEADING if column == "heading_path" else Scope.BODY
    phrases = [term.phrase_expression() for term in terms if term.scope in (Scope.ANY, wanted)]
    if not phrases:
        return {}
    return _per_document(connection, "count(*)", f"{column}:({' OR '.join(phrases)})")


def _first_matches(connection: sqlite3.Connection, terms: Sequence[Term]) -> dict[int, int]:
    """Per document, the ordinal of the first chunk where any of ``terms`` matches, each in its
    own column."""
    expression = "(" + " OR ".join(term.expression() for term in terms) + ")"
    return _per_document(connection, "min(c.ordinal)", expression)


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


def _related_forms(connection: sqlite3.Connection, word: str, stem: str) -> tuple[str, ...]:
    """Other words of the corpus that stem like ``word``, most common first, as Go finds them:
    the words that start with the stem are the candidates, and their real stems decide."""
    rows = connection.execute(
        "SELECT term FROM chunks_vocab WHERE term >= ? AND term < ? ORDER BY doc DESC",
        (stem, stem[:-1] + chr(ord(stem[-1]) + 1)),
    ).fetchall()
    candidates = [str(row[0]) for row in rows if str(row[0]).casefold() != word.casefold()]
    if not candidates:
        return ()
    stems = _stems(candidates)
    related = [c for c, s in zip(candidates, stems, strict=True) if s == stem]
    return tuple(related[:_RELATED_FORMS])


def _term_report(connection: sqlite3.Connection, term: Term, found: set[int]) -> TermReport:
    exact = _document_set(connection, "chunks_fts_exact", term.expression())
    # Only a count the stemming raised has something to explain.
    explained = len(found) > len(exact) and not term.phrase and len(term.words) == 1
    stem = _stems([term.words[0].lower()])[0] if explained else ""
    related = _related_forms(connection, term.words[0], stem) if stem else ()
    return TermReport(term.surface, len(found), len(exact), related_forms=related)


def _reports(
    connection: sqlite3.Connection, query: EnumerateQuery, sets: dict[Term, set[int]]
) -> tuple[TermReport, ...]:
    """What each term found, as the Go original lists them: the included terms, the excluded
    ones, then the words not queried."""
    asked = tuple(
        _term_report(connection, term, sets.get(term, set()))
        for term in (*query.included, *query.excluded)
    )
    skipped = tuple(
        TermReport(word, 0, 0, not_queried=why.value) for word, why in query.not_queried
    )
    return asked + skipped


def enumerate_documents(
    connection: sqlite3.Connection, text: str, *, min_body_matches: int = 0
) -> EnumerateAnswer:
    """Every document holding all the query's terms and none of its excluded ones, each term
    matched anywhere in the document; unranked, ordered as Go orders them: by how many chunks
    match in the body and the heading together, then by path. ``min_body_matches`` keeps the
    documents with at least that many chunks matching in the body. Raises QueryError for a
    query the language refuses."""
    query = parse_enumerate(text)
    indexed = int(connection.execute("SELECT count(*) FROM documents").fetchone()[0])
    if indexed == 0:
        return EnumerateAnswer(EnumerateStatus.CORPUS_EMPTY, query, (), (), indexed)
    if query.empty:
        reports = _reports(connection, query, {})
        return EnumerateAnswer(EnumerateStatus.QUERY_EMPTY, query, (), reports, indexed)

    sets = {
        term: _document_set(connection, "chunks_fts", term.expression()) for term in query.terms
    }
    matched = set.intersection(*(sets[term] for term in query.included))
    for term in query.excluded:
        matched -= sets[term]

    documents: list[MatchedDocument] = []
    if matched:
        body = _chunk_counts(connection, "body", query.included)
        heading = _chunk_counts(connection, "heading_path", query.included)
        first = _first_matches(connection, query.included)
        rows = connection.execute(
            "SELECT d.id, d.path, (SELECT count(*) FROM chunks c WHERE c.document_id = d.id) "
            "FROM documents d"
        ).fetchall()
        for document_id, path, total in rows:
            key = int(document_id)
            if key in matched and body.get(key, 0) >= min_body_matches:
                documents.append(
                    MatchedDocument(
                        str(path),
                        body.get(key, 0),
                        heading.get(key, 0),
                        int(total),
                        first.get(key, 0),
                    )
                )
    documents.sort(key=lambda d: (-(d.body_matches + d.heading_matches), d.path))
    reports = _reports(connection, query, sets)
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
