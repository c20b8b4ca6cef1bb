"""The knowledge store as a run sees it: opened once per host, read-only, searched off the loop.

A host builds one ``KnowledgeIndex`` and every run's tools share it. The database is opened on
first use, not at construction: when no index exists yet, each search looks again, so an index
built after the host started is seen by the next call without a restart. A database of another
format is refused when the host starts (``check``), naming the command that rebuilds it.

With ``harness.knowledge.embeddings`` the index searches both tiers and fuses them. The query is
embedded before the reader's connection is taken, so a slow endpoint never holds up another
run's search; when the endpoint cannot answer, the search answers from the lexical tier, says so
in its tier line, and the index counts it (``degraded_searches``). A model or prefix other than
the one the index was built with is refused, naming ``fisk knowledge index --reindex``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fisk_ai import config, telemetry
from fisk_ai.knowledge.errors import FormatMismatch, KnowledgeError
from fisk_ai.knowledge.query import search_query
from fisk_ai.knowledge.search import (
    LEXICAL_TIER,
    EnumerateAnswer,
    EnumerateStatus,
    SearchAnswer,
    SearchStatus,
)

if TYPE_CHECKING:
    from fisk_ai.knowledge.embeddings import TextEmbedder
    from fisk_ai.knowledge.search import Hit
    from fisk_ai.knowledge.store import Manifest

__all__ = [
    "EMBEDDINGS_NOT_BUILT",
    "ChunkContext",
    "IndexOverview",
    "IndexState",
    "KnowledgeIndex",
    "SourceState",
    "knowledge_directory",
    "open_knowledge",
    "refuse_unbuilt_keys",
    "wanted_manifest",
]

# Kept for callers written when the vector tier was refused; nothing refuses it now.
EMBEDDINGS_NOT_BUILT = ""


def refuse_unbuilt_keys(cfg: config.Config) -> None:
    """Refuse a knowledge key that cannot work, naming it: an embeddings block whose base_url
    is not https (or loopback http) or whose api_key_env names an unset variable."""
    from fisk_ai.knowledge.embeddings import check_embeddings

    settings = cfg.harness.knowledge
    if settings.enabled and settings.embeddings is not None:
        check_embeddings(settings.embeddings)


def wanted_manifest(settings: config.Embeddings | None, dimension: int = 0) -> Manifest | None:
    """The manifest the configuration asks for (dimension 0 when not probed)."""
    from fisk_ai.knowledge.embeddings import manifest_model
    from fisk_ai.knowledge.store import Manifest

    if settings is None:
        return None
    return Manifest(
        manifest_model(settings), dimension, settings.query_prefix, settings.document_prefix
    )


def knowledge_directory(cfg: config.Config, store_dir: str | None = None) -> Path:
    """Where ``cfg`` keeps its knowledge store: harness.knowledge.directory, resolved against
    ``store_dir`` (``--store-dir``) when given and relative, else against the working
    directory."""
    directory = Path(cfg.harness.knowledge.directory or f"knowledge/{cfg.identity}")
    if store_dir and not directory.is_absolute():
        return Path(store_dir) / directory
    return directory


class IndexState(enum.Enum):
    """What a reader finds: no database, a database of another format (or built with other
    embeddings), one whose files changed since they were indexed, or one in step with them."""

    NOT_BUILT = "not built"
    FORMAT_MISMATCH = "format mismatch"
    STALE = "stale"
    BUILT = "built"


@dataclass(frozen=True)
class SourceState:
    """One indexed document: its chunk count and, when its file no longer matches what was
    indexed, why ("" when it does)."""

    path: str
    chunks: int
    stale: str = ""


@dataclass(frozen=True)
class IndexOverview:
    """The index as the explorer shows it; ``problem`` is the store's sentence for a state that
    is not built, and ``tier`` the tier line a search of this index answers with."""

    state: IndexState
    problem: str
    sources: tuple[SourceState, ...]
    chunks: int
    tier: str


@dataclass(frozen=True)
class ChunkContext:
    """A chunk with its neighbours in document order, and how many chunks the document has."""

    chunks: tuple[Hit, ...]
    total: int


class KnowledgeIndex:
    """The read side of one knowledge store, shared by every run of a host."""

    def __init__(self, directory: Path, embeddings: config.Embeddings | None = None) -> None:
        from fisk_ai.knowledge.store import KnowledgeReader

        self.directory = directory
        self._reader = KnowledgeReader(directory)
        self._settings = embeddings
        self._embedder: TextEmbedder | None = None
        if embeddings is not None:
            from fisk_ai.knowledge.embeddings import open_embedder

            self._embedder = open_embedder(embeddings)
        self._count_lock = threading.Lock()
        self.degraded_searches = 0

    def _open(self) -> bool:
        if not self._reader.open():
            return False
        if self._settings is not None:
            self._manifest()
        return True

    def _manifest(self) -> Manifest | None:
        """The vector tier's manifest, checked against the configuration on every search, so
        an index rebuilt under a running host is seen as it is now."""
        from fisk_ai.knowledge.store import check_manifest

        with self._reader.use() as connection:
            return check_manifest(
                connection,
                self._reader.paths.database,
                wanted_manifest(self._settings),
                writing=False,
            )

    async def check(self) -> bool:
        """Open the index now if it exists (True), so a database of another format fails the
        host at startup; False when none is built yet."""
        return await asyncio.to_thread(self._open)

    def _search(self, text: str, top_k: int) -> SearchAnswer:
        from fisk_ai.knowledge.search import search

        if not self._reader.open():
            return SearchAnswer(SearchStatus.INDEX_NOT_BUILT, (), search_query(text))
        manifest = self._manifest() if self._embedder is not None else None
        if manifest is None or self._embedder is None:
            with self._reader.use() as connection:
                return search(connection, text, top_k)
        return self._hybrid(self._embedder, manifest, text, top_k)

    def _hybrid(
        self, embedder: TextEmbedder, manifest: Manifest, text: str, top_k: int
    ) -> SearchAnswer:
        from fisk_ai.knowledge.embeddings import EmbeddingsUnavailable
        from fisk_ai.knowledge.search import degraded_tier, hybrid_tier, search

        try:
            with telemetry.current().embedding_batch(embedder.model, 1):
                vector = embedder.embed_query(text)
        except EmbeddingsUnavailable as exc:
            with self._count_lock:
                self.degraded_searches += 1
            with self._reader.use() as connection:
                answer = search(connection, text, top_k)
            return dataclasses.replace(answer, tier=degraded_tier(exc.reason), degraded=exc.reason)
        if len(vector) != manifest.dimension:
            # A wrong answer, not a narrower one: refused rather than degraded.
            raise KnowledgeError(
                f"the embeddings model {manifest.model} answered with {len(vector)} dimensions "
                f"but the index holds {manifest.dimension}; rebuild it with "
                "`fisk knowledge index --reindex`"
            )
        with self._reader.use() as connection:
            answer = search(connection, text, top_k, vector=vector)
        return dataclasses.replace(answer, tier=hybrid_tier(manifest.model, manifest.dimension))

    def search_blocking(self, text: str, top_k: int) -> SearchAnswer:
        """``search`` on the caller's thread (the command line's search)."""
        return self._search(text, top_k)

    async def search(self, text: str, top_k: int) -> SearchAnswer:
        return await asyncio.to_thread(self._search, text, top_k)

    def _enumerate(self, text: str) -> EnumerateAnswer:
        from fisk_ai.knowledge.query import EnumerateQuery
        from fisk_ai.knowledge.search import enumerate_documents

        if not self._open():
            # Said before the query is compiled, as the Go original does: there is nothing to
            # match it against yet.
            return EnumerateAnswer(EnumerateStatus.INDEX_NOT_BUILT, EnumerateQuery(()), (), (), 0)
        with self._reader.use() as connection:
            return enumerate_documents(connection, text)

    async def enumerate(self, text: str) -> EnumerateAnswer:
        return await asyncio.to_thread(self._enumerate, text)

    def _overview(self) -> IndexOverview:
        from fisk_ai.knowledge.indexing import changed_on_disk
        from fisk_ai.knowledge.search import hybrid_tier
        from fisk_ai.knowledge.store import stored_documents

        directory = self._reader.paths.directory
        try:
            if not self._open():
                return IndexOverview(
                    IndexState.NOT_BUILT,
                    f"no knowledge index is built at {directory}; build it with "
                    "fisk knowledge index",
                    (),
                    0,
                    "",
                )
            manifest = self._manifest() if self._settings is not None else None
        except FormatMismatch as exc:
            return IndexOverview(IndexState.FORMAT_MISMATCH, str(exc), (), 0, "")
        with self._reader.use() as connection:
            stored = stored_documents(connection)
        documents = [stored[path] for path in sorted(stored)]
        states = tuple(
            SourceState(document.path, document.chunks, changed_on_disk(document))
            for document in documents
        )
        stale = sum(1 for source in states if source.stale)
        tier = LEXICAL_TIER if manifest is None else hybrid_tier(manifest.model, manifest.dimension)
        return IndexOverview(
            IndexState.STALE if stale else IndexState.BUILT,
            f"{stale} of {len(states)} documents changed since they were indexed; "
            "fisk knowledge index brings them in"
            if stale
            else "",
            states,
            sum(document.chunks for document in documents),
            tier,
        )

    async def overview(self) -> IndexOverview:
        """The index's state, its documents with their chunk counts (each checked against its
        file) and the tier a search answers from."""
        return await asyncio.to_thread(self._overview)

    def _context(self, path: str, ordinal: int, radius: int) -> ChunkContext | None:
        from fisk_ai.knowledge.search import chunks_around

        if not self._open():
            return None
        with self._reader.use() as connection:
            found = chunks_around(connection, path, ordinal, radius)
        return None if found is None else ChunkContext(*found)

    async def context(self, path: str, ordinal: int, radius: int) -> ChunkContext | None:
        """The chunk at ``path#ordinal`` with ``radius`` neighbours each side; None when the
        index holds no such chunk."""
        return await asyncio.to_thread(self._context, path, ordinal, radius)

    def close(self) -> None:
        self._reader.close()
        if self._embedder is not None:
            self._embedder.close()


@contextlib.asynccontextmanager
async def open_knowledge(cfg: config.Config) -> AsyncIterator[KnowledgeIndex | None]:
    """The knowledge index every run of ``cfg`` shares, or None when harness.knowledge is not
    enabled. Refuses an unbuilt key and a database of another format before anything runs."""
    if not cfg.harness.knowledge.enabled:
        yield None
        return
    refuse_unbuilt_keys(cfg)
    index = KnowledgeIndex(knowledge_directory(cfg), cfg.harness.knowledge.embeddings)
    try:
        await index.check()
        yield index
    finally:
        index.close()
