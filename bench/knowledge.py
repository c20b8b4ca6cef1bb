"""The knowledge store's search latency and indexing throughput, each beside a bare baseline
measured in the same run on the same data.

- indexing: ``fisk knowledge index`` work (walk, read, hash, chunk, one transaction per
  document through the triggers into both FTS tables) over a generated markdown corpus, in
  chunks per second, beside a bare insert of the very same chunks into the same schema in one
  transaction;
- search: the median of ``search()`` (query compiled, BM25 with heading weight, rows joined to
  their documents) on a read-only connection, beside the same FTS5 MATCH with the same bm25
  ordering run raw through the interpreter's own sqlite3 on the same file;
- the tool path: the same search through ``KnowledgeIndex`` (a thread hop per call), which is
  what a run pays.

No asserts: the figures are printed for the README's performance table.

    python bench/knowledge.py [--chunks 50000] [--queries 300]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.knowledge.chunking import chunk_text
from fisk_ai.knowledge.indexing import index_files, walk
from fisk_ai.knowledge.search import search
from fisk_ai.knowledge.store import _SCHEMA, KnowledgeReader, KnowledgeWriter, connect

CHUNKS_PER_FILE = 10
# What search() runs, written out for the raw baseline.
SEARCH_STATEMENT = (
    "SELECT d.path, c.ordinal, c.heading_path, c.body, ranked.score FROM ("
    "SELECT rowid AS id, bm25(chunks_fts, 1.0, 2.0) AS score FROM chunks_fts "
    "WHERE chunks_fts MATCH ? ORDER BY score, rowid LIMIT ?) AS ranked "
    "JOIN chunks c ON c.id = ranked.id JOIN documents d ON d.id = c.document_id "
    "ORDER BY ranked.score, ranked.id"
)
MATCH_ONLY = (
    "SELECT rowid, bm25(chunks_fts, 1.0, 2.0) AS score FROM chunks_fts "
    "WHERE chunks_fts MATCH ? ORDER BY score LIMIT 5"
)
SEED = 1


def vocabulary(size: int) -> list[str]:
    generator = random.Random(SEED)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(generator.choices(letters, k=generator.randint(4, 10))) for _ in range(size)]


def generate(root: Path, chunks: int, words: list[str]) -> None:
    """Files of ten sections each, every section one heading and about 900 bytes of text, so
    each section is one chunk."""
    generator = random.Random(SEED)
    for number in range(chunks // CHUNKS_PER_FILE):
        sections = []
        for section in range(CHUNKS_PER_FILE):
            title = " ".join(generator.choices(words[:2000], k=3))
            paragraphs = [" ".join(generator.choices(words, k=45)) for _ in range(3)]
            sections.append(f"## {title} {section}\n\n" + "\n\n".join(paragraphs))
        path = root / f"area{number % 50:02d}" / f"doc{number:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Document {number}\n\n" + "\n\n".join(sections) + "\n")


def bare_insert(directory: Path, files: list[Path]) -> tuple[float, int]:
    """The same chunks into the same schema in one transaction, chunked beforehand, so only
    the inserts (and the FTS triggers) are timed."""
    rows: list[tuple[int, str, int, str]] = []
    for document, path in enumerate(files, 1):
        chunked = chunk_text(path.read_text())
        rows += [
            (document, chunk.heading_path, ordinal, chunk.body)
            for ordinal, chunk in enumerate(chunked.chunks)
        ]
    directory.mkdir()
    connection = connect(str(directory / "bare.db"))
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    for statement in _SCHEMA:
        connection.execute(statement)
    started = time.perf_counter()
    connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO documents(id, path) VALUES (?, ?)",
        [(document, str(path)) for document, path in enumerate(files, 1)],
    )
    connection.executemany(
        "INSERT INTO chunks(document_id, heading_path, ordinal, body) VALUES (?, ?, ?, ?)", rows
    )
    connection.execute("COMMIT")
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed, len(rows)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def measure_search(
    store: Path, queries: list[str]
) -> tuple[list[float], list[float], list[float], list[float]]:
    """Per query: search(), the same statement raw, a bare MATCH, and the tool path."""
    reader = KnowledgeReader(store)
    reader.open()
    ours: list[float] = []
    with reader.use() as connection:
        for query in queries:
            started = time.perf_counter()
            search(connection, query, 5)
            ours.append(time.perf_counter() - started)
    reader.close()

    raw = sqlite3.connect(f"file:{store / 'knowledge.db'}?mode=ro", uri=True)
    same: list[float] = []
    bare: list[float] = []
    for query in queries:
        expression = " OR ".join(f'"{word}"' for word in query.split())
        started = time.perf_counter()
        raw.execute(SEARCH_STATEMENT, (expression, 5)).fetchall()
        same.append(time.perf_counter() - started)
        started = time.perf_counter()
        raw.execute(MATCH_ONLY, (expression,)).fetchall()
        bare.append(time.perf_counter() - started)
    raw.close()

    index = KnowledgeIndex(store)

    async def through_tool() -> list[float]:
        samples: list[float] = []
        for query in queries:
            started = time.perf_counter()
            await index.search(query, 5)
            samples.append(time.perf_counter() - started)
        return samples

    tool = asyncio.run(through_tool())
    index.close()
    return ours, same, bare, tool


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    words = vocabulary(20_000)

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        corpus = root / "corpus"
        started = time.perf_counter()
        generate(corpus, args.chunks, words)
        print(
            f"corpus: {args.chunks // CHUNKS_PER_FILE} files generated in "
            f"{time.perf_counter() - started:.1f} s"
        )

        store = root / "store"
        files = list(walk([str(corpus)], store))
        started = time.perf_counter()
        with KnowledgeWriter(store) as writer:
            report = index_files(writer, {}, files, reconcile=True)
        index_seconds = time.perf_counter() - started
        bare_seconds, bare_chunks = bare_insert(root / "bare", files)
        print(
            f"indexing: {report.chunks / index_seconds:,.0f} chunks/s "
            f"({report.chunks} chunks, {report.files} files in {index_seconds:.1f} s)"
        )
        print(
            f"  bare insert of the same chunks: {bare_chunks / bare_seconds:,.0f} chunks/s "
            f"({bare_seconds:.1f} s); indexing runs at "
            f"{(report.chunks / index_seconds) / (bare_chunks / bare_seconds):.0%} of it"
        )

        generator = random.Random(SEED + 1)
        queries = [" ".join(generator.choices(words[:5000], k=2)) for _ in range(args.queries)]
        ours, same, bare, tool = measure_search(store, queries)
        print(
            f"search p50 at {report.chunks} chunks: {median_ms(ours):.2f} ms "
            f"(p95 {statistics.quantiles(ours, n=20)[-1] * 1000:.2f} ms)"
        )
        print(
            f"  the same FTS5 statement raw through sqlite3: {median_ms(same):.2f} ms; search is "
            f"{median_ms(ours) / median_ms(same):.2f}x of it"
        )
        print(
            f"  a bare MATCH ranked by bm25, no join, no text: {median_ms(bare):.2f} ms; search "
            f"is {median_ms(ours) / median_ms(bare):.2f}x of it"
        )
        print(f"  through KnowledgeIndex (thread hop, as a run): {median_ms(tool):.2f} ms")


if __name__ == "__main__":
    main()
