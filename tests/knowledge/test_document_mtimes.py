"""Documents' modification times: stored in seconds, and an index written with nanoseconds still
listed right."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.knowledge.search import Source
from fisk_ai.knowledge.store import KnowledgeReader, stored_documents
from fisk_ai.lineui.knowledge import source_lines


def test_documents_record_mtime_in_seconds(indexed_project: Path) -> None:
    reader = KnowledgeReader(indexed_project / "knowledge" / "ops")
    assert reader.open()
    with reader.use() as connection:
        stored = stored_documents(connection)
    reader.close()

    for path, document in stored.items():
        assert document.mtime == Path(path).stat().st_mtime_ns // 1_000_000_000


def test_sources_lists_an_index_written_with_nanosecond_mtimes() -> None:
    older = Source("docs/a.md", "A", 1, 1_767_225_600 * 1_000_000_000)
    newer = Source("docs/a.md", "A", 1, 1_767_225_600)

    assert source_lines([older]) == source_lines([newer])
