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
  what a run pays;
- hybrid search: a second index of ``--hybrid-chunks`` chunks with vectors from the fake OpenAI
  embeddings endpoint of the tests (loopback HTTP, 384 dimensions), searched hybrid beside the
  lexical search and the raw FTS5 statement on that same index, and beside the query's
  embeddings round trip alone;
- watch: the median time from a file write to the file being searchable, with
  ``fisk knowledge watch``'s ``Watcher`` running over the corpus, for ``--writes`` writes;
- the local embedder (``provider: local``, all-MiniLM-L6-v2 in numpy), when installed: its
  load, a search question, and the chunks of this repository's docs/ embedded one at a time
  beside the same chunks embedded in batches (``--local-texts`` of them), per text.

No asserts: the figures are printed for the README's performance table.

    python bench/knowledge.py [--chunks 50000] [--queries 300] [--hybrid-chunks 10000]
                              [--writes 7] [--local-texts 100]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from fisk_ai.knowledge.access import KnowledgeIndex, wanted_manifest
from fisk_ai.knowledge.chunking import split_into_chunks
from fisk_ai.knowledge.embeddings import Embedder
from fisk_ai.knowledge.indexing import index_files, vector_embed, walk
from fisk_ai.knowledge.search import search
from fisk_ai.knowledge.store import (
    _SCHEMA,
    KnowledgeReader,
    KnowledgeWriter,
    connect,
    vector_blob,
)
from fisk_ai.knowledge.watch import MIN_DEBOUNCE, Watcher

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.knowledge import fake_embeddings  # noqa: E402
from tests.knowledge.fake_embeddings import FakeEmbeddings, settings  # noqa: E402

# The fake's vectors, widened to a real small model's size (all-MiniLM-L6-v2 has 384).
EMBEDDING_DIMENSION = 384

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
        chunked = split_into_chunks(path.read_text())
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


def raw_statement_ms(store: Path, queries: list[str]) -> list[float]:
    """The search statement raw through sqlite3 on ``store``, per query."""
    raw = sqlite3.connect(f"file:{store / 'knowledge.db'}?mode=ro", uri=True)
    samples: list[float] = []
    for query in queries:
        expression = " OR ".join(f'"{word}"' for word in query.split())
        started = time.perf_counter()
        raw.execute(SEARCH_STATEMENT, (expression, 5)).fetchall()
        samples.append(time.perf_counter() - started)
    raw.close()
    return samples


def raw_knn(store: Path, vectors: list[list[float]]) -> list[float]:
    """The vector half of a hybrid search, raw: the 50 nearest chunks by sqlite-vec."""
    raw = connect(f"file:{store / 'knowledge.db'}?mode=ro", uri=True)
    samples: list[float] = []
    for vector in vectors:
        started = time.perf_counter()
        raw.execute(
            "SELECT chunk_id FROM chunks_vec WHERE embedding MATCH ? AND k = 50 ORDER BY distance",
            (vector_blob(vector),),
        ).fetchall()
        samples.append(time.perf_counter() - started)
    raw.close()
    return samples


def timed(index: KnowledgeIndex, queries: list[str]) -> list[float]:
    samples: list[float] = []
    for query in queries:
        started = time.perf_counter()
        index.search_blocking(query, 5)
        samples.append(time.perf_counter() - started)
    return samples


def measure_hybrid(root: Path, chunks: int, words: list[str], queries: list[str]) -> None:
    """A hybrid index of ``chunks`` chunks; hybrid search beside lexical and raw on it."""
    fake_embeddings.DIMENSION = EMBEDDING_DIMENSION
    fake = FakeEmbeddings()
    try:
        corpus = root / "hybrid-corpus"
        generate(corpus, chunks, words)
        store = root / "hybrid-store"
        embeddings = settings(fake.url)
        embedder = Embedder(embeddings)
        started = time.perf_counter()
        with KnowledgeWriter(store) as writer:
            writer.plan_vectors(wanted_manifest(embeddings, embedder.probe()))
            report = index_files(
                writer,
                {},
                list(walk([str(corpus)], store)),
                reconcile=True,
                embed=vector_embed(embedder),
            )
        seconds = time.perf_counter() - started
        print(
            f"hybrid index: {report.chunks} chunks with {report.embeddings} vectors "
            f"(dim {EMBEDDING_DIMENSION}) in {seconds:.1f} s, {report.chunks / seconds:,.0f} "
            "chunks/s including the fake endpoint"
        )
        lexical = KnowledgeIndex(store)
        hybrid = KnowledgeIndex(store, embeddings)
        try:
            words_only = timed(lexical, queries)
            fused = timed(hybrid, queries)
            assert hybrid.degraded_searches == 0, "the fake endpoint did not answer"
        finally:
            lexical.close()
            hybrid.close()
        raw = raw_statement_ms(store, queries)
        round_trips: list[float] = []
        vectors: list[list[float]] = []
        for query in queries:
            started = time.perf_counter()
            vectors.append(embedder.embed_query(query))
            round_trips.append(time.perf_counter() - started)
        embedder.close()
        knn = raw_knn(store, vectors)
        print(
            f"hybrid search p50 at {report.chunks} chunks: {median_ms(fused):.2f} ms "
            f"(p95 {statistics.quantiles(fused, n=20)[-1] * 1000:.2f} ms)"
        )
        print(
            f"  lexical search on the same index: {median_ms(words_only):.2f} ms; "
            f"the raw FTS5 statement: {median_ms(raw):.2f} ms; hybrid is "
            f"{median_ms(fused) / median_ms(words_only):.1f}x lexical"
        )
        print(
            f"  of which the query's embeddings round trip (loopback HTTP to the fake): "
            f"{median_ms(round_trips):.2f} ms, and the raw sqlite-vec KNN (k=50, brute force) "
            f"through sqlite: {median_ms(knn):.2f} ms"
        )
    finally:
        fake.stop()


def measure_watch(corpus: Path, store: Path, writes: int) -> None:
    """Median time from writing a file to finding its word by search, the watcher running."""
    stop = threading.Event()
    with KnowledgeWriter(store) as writer:
        # The quickest quiet period --debounce takes: the figure is the watcher's, not the wait.
        watcher = Watcher(writer, [str(corpus)], reconcile=True, debounce=MIN_DEBOUNCE)
        thread = threading.Thread(target=watcher.run, args=(lambda _report: None, stop))
        thread.start()
        reader = KnowledgeReader(store)
        reader.open()
        samples: list[float] = []
        try:
            if not watcher.watching.wait(600):
                raise SystemExit("watch: the watch never started")
            for number in range(writes):
                word = "watched" + "".join(chr(ord("a") + int(d)) for d in f"{number:04d}")
                path = corpus / "watched" / f"note{number}.md"
                path.parent.mkdir(exist_ok=True)
                started = time.perf_counter()
                path.write_text(f"# Watched {number}\n\n{word} arrives.\n")
                while True:
                    with reader.use() as connection:
                        if search(connection, word, 1).hits:
                            break
                    if time.perf_counter() - started > 10:
                        raise SystemExit(f"watch: {word} not searchable after 10 s")
                    time.sleep(0.002)
                samples.append(time.perf_counter() - started)
                time.sleep(0.1)
        finally:
            stop.set()
            thread.join(10)
            reader.close()
    print(
        f"watch: a written file is searchable after {median_ms(samples):.0f} ms "
        f"(median of {writes} writes; min {min(samples) * 1000:.0f}, max "
        f"{max(samples) * 1000:.0f} ms)"
    )


def measure_local_embedder(texts: int, queries: list[str]) -> None:
    """The local embedder's cost per text alone and per text in a batch, on real prose."""
    from fisk_ai import config
    from fisk_ai.knowledge import KnowledgeError
    from fisk_ai.knowledge.embeddings import check_embeddings, document_input
    from fisk_ai.knowledge.local_embedder import LocalEmbedder

    settings = config.Embeddings(provider=config.EmbeddingsProvider.LOCAL)
    try:
        check_embeddings(settings)
    except KnowledgeError as exc:
        print(f"local embedder: not measured ({exc})")
        return
    chunks = [
        document_input("", chunk.heading_path, chunk.body)
        for path in sorted((REPO_ROOT / "docs").glob("*.md"))
        for chunk in split_into_chunks(path.read_text()).chunks
    ][:texts]
    embedder = LocalEmbedder(settings)
    started = time.perf_counter()
    embedder.probe()
    load_seconds = time.perf_counter() - started
    asked: list[float] = []
    for query in queries[:texts]:
        started = time.perf_counter()
        embedder.embed_query(query)
        asked.append(time.perf_counter() - started)
    questions = queries[:texts]
    started = time.perf_counter()
    embedder.embed([embedder.query_prefix + question for question in questions])
    questions_batched = (time.perf_counter() - started) / len(questions)
    alone: list[float] = []
    for text in chunks:
        started = time.perf_counter()
        embedder.embed([text])
        alone.append(time.perf_counter() - started)
    started = time.perf_counter()
    embedder.embed(chunks)
    batched = (time.perf_counter() - started) / len(chunks)
    print(
        f"local embedder (all-MiniLM-L6-v2 in numpy): loaded in {load_seconds:.2f} s; "
        f"{len(questions)} two-word search questions: {median_ms(asked):.1f} ms per question "
        f"alone (p50), {questions_batched * 1000:.1f} ms per question in batches"
    )
    print(
        f"  {len(chunks)} chunks of docs/: {median_ms(alone):.1f} ms per chunk alone (p50), "
        f"{sum(alone) / len(alone) * 1000:.1f} ms mean; in batches: {batched * 1000:.1f} ms "
        f"per chunk, {sum(alone) / len(alone) / batched:.1f}x the throughput"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--hybrid-chunks", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=7)
    parser.add_argument("--local-texts", type=int, default=100)
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

        measure_hybrid(root, args.hybrid_chunks, words, queries)
        measure_watch(corpus, store, args.writes)
        measure_local_embedder(args.local_texts, queries)


if __name__ == "__main__":
    main()
