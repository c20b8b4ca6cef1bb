"""The knowledge store as a run sees it: opened once per host, read-only, searched off the loop.

A host builds one ``KnowledgeIndex`` and every run's tools share it. The database is opened on
first use, not at construction: when no index exists yet, each search looks again, so an index
built after the host started is seen by the next call without a restart. A database of another
format is refused when the host starts (``check``), naming the command that rebuilds it.

Only the lexical tier is built. ``harness.knowledge.embeddings`` is refused where the store is
opened, in one sentence, rather than accepted and ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from fisk_ai import config
from fisk_ai.knowledge.errors import KnowledgeError
from fisk_ai.knowledge.query import search_query
from fisk_ai.knowledge.search import (
    EnumerateAnswer,
    EnumerateStatus,
    SearchAnswer,
    SearchStatus,
)

__all__ = [
    "EMBEDDINGS_NOT_BUILT",
    "KnowledgeIndex",
    "knowledge_directory",
    "open_knowledge",
    "refuse_unbuilt_keys",
]

EMBEDDINGS_NOT_BUILT = (
    "harness.knowledge.embeddings is not built yet in this fisk-ai (the knowledge store "
    "searches its lexical tier only); remove the embeddings block"
)


def refuse_unbuilt_keys(cfg: config.Config) -> None:
    """Refuse a knowledge key whose system is not built yet, rather than ignore it."""
    if cfg.harness.knowledge.enabled and cfg.harness.knowledge.embeddings is not None:
        raise KnowledgeError(EMBEDDINGS_NOT_BUILT)


def knowledge_directory(cfg: config.Config, store_dir: str | None = None) -> Path:
    """Where ``cfg`` keeps its knowledge store: harness.knowledge.directory, resolved against
    ``store_dir`` (``--store-dir``) when given and relative, else against the working
    directory."""
    directory = Path(cfg.harness.knowledge.directory or f"knowledge/{cfg.identity}")
    if store_dir and not directory.is_absolute():
        return Path(store_dir) / directory
    return directory


class KnowledgeIndex:
    """The read side of one knowledge store, shared by every run of a host."""

    def __init__(self, directory: Path) -> None:
        from fisk_ai.knowledge.store import KnowledgeReader

        self.directory = directory
        self._reader = KnowledgeReader(directory)

    def _open(self) -> bool:
        return self._reader.open()

    async def check(self) -> bool:
        """Open the index now if it exists (True), so a database of another format fails the
        host at startup; False when none is built yet."""
        return await asyncio.to_thread(self._open)

    def _search(self, text: str, top_k: int) -> SearchAnswer:
        from fisk_ai.knowledge.search import search

        if not self._open():
            return SearchAnswer(SearchStatus.INDEX_NOT_BUILT, (), search_query(text))
        with self._reader.use() as connection:
            return search(connection, text, top_k)

    async def search(self, text: str, top_k: int) -> SearchAnswer:
        return await asyncio.to_thread(self._search, text, top_k)

    def _enumerate(self, text: str) -> EnumerateAnswer:
        from fisk_ai.knowledge.query import parse_enumerate
        from fisk_ai.knowledge.search import enumerate_documents

        if not self._open():
            query = parse_enumerate(text)
            return EnumerateAnswer(EnumerateStatus.INDEX_NOT_BUILT, query, (), (), 0)
        with self._reader.use() as connection:
            return enumerate_documents(connection, text)

    async def enumerate(self, text: str) -> EnumerateAnswer:
        return await asyncio.to_thread(self._enumerate, text)

    def close(self) -> None:
        self._reader.close()


@contextlib.asynccontextmanager
async def open_knowledge(cfg: config.Config) -> AsyncIterator[KnowledgeIndex | None]:
    """The knowledge index every run of ``cfg`` shares, or None when harness.knowledge is not
    enabled. Refuses an unbuilt key and a database of another format before anything runs."""
    if not cfg.harness.knowledge.enabled:
        yield None
        return
    refuse_unbuilt_keys(cfg)
    index = KnowledgeIndex(knowledge_directory(cfg))
    try:
        await index.check()
        yield index
    finally:
        index.close()
