"""The reads the workstation's explorer makes of the index: a chunk among its neighbours, the
words a search matched in a text, and whether an indexed file changed since."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fisk_ai.knowledge.access import IndexState, KnowledgeIndex
from fisk_ai.knowledge.indexing import changed_on_disk
from fisk_ai.knowledge.search import chunks_around, matched_spans
from fisk_ai.knowledge.store import KnowledgeReader, stored_documents
from tests.knowledge.conftest import index, write_corpus

FOUR_SECTIONS = "# A\n\none\n\n## B\n\ntwo\n\n## C\n\nthree\n\n## D\n\nfour\n"


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, {"docs/sections.md": FOUR_SECTIONS})
    store = Path("store")
    index(store, Path("docs"))
    return store


def test_a_chunk_comes_with_its_neighbours_cut_at_the_documents_ends(built: Path) -> None:
    reader = KnowledgeReader(built)
    assert reader.open()
    with reader.use() as connection:
        first = chunks_around(connection, "docs/sections.md", 0, 2)
        middle = chunks_around(connection, "docs/sections.md", 2, 1)
        missing = chunks_around(connection, "docs/sections.md", 9, 1)
    reader.close()

    assert first is not None and middle is not None
    assert [chunk.citation for chunk in first[0]] == [
        "docs/sections.md#0",
        "docs/sections.md#1",
        "docs/sections.md#2",
    ]
    assert first[1] == 4
    assert [(chunk.ordinal, chunk.heading_path, chunk.body) for chunk in middle[0]] == [
        (1, "A > B", "two"),
        (2, "A > C", "three"),
        (3, "A > D", "four"),
    ]
    assert missing is None


def test_matched_spans_are_the_words_the_stemmed_index_matches() -> None:
    text = "Restarting the fleet: restart it, then restarts_log; not a restaurant."
    spans = matched_spans(text, ["restart"])
    assert [text[start:end] for start, end in spans] == ["Restarting", "restart", "restarts"]
    assert matched_spans(text, []) == []


def test_a_touched_but_unchanged_file_is_not_stale(built: Path) -> None:
    reader = KnowledgeReader(built)
    assert reader.open()
    with reader.use() as connection:
        document = stored_documents(connection)["docs/sections.md"]
    reader.close()
    path = Path("docs/sections.md")

    os.utime(path, (document.mtime + 1, document.mtime + 1))
    assert changed_on_disk(document) == ""
    path.write_text(FOUR_SECTIONS + "more\n")
    assert changed_on_disk(document) == "changed since indexed"
    path.unlink()
    assert changed_on_disk(document) == "gone"


async def test_the_overview_counts_what_the_index_holds(built: Path) -> None:
    knowledge = KnowledgeIndex(built)
    try:
        overview = await knowledge.overview()
        context = await knowledge.context("docs/sections.md", 3, 2)
    finally:
        knowledge.close()
    assert overview.state is IndexState.BUILT
    assert [(source.path, source.chunks, source.stale) for source in overview.sources] == [
        ("docs/sections.md", 4, "")
    ]
    assert overview.chunks == 4
    assert context is not None
    assert [chunk.ordinal for chunk in context.chunks] == [1, 2, 3]
