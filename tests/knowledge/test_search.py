"""Search and enumerate: the query language, set logic across chunks, citations."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fisk_ai.knowledge import KnowledgeError, QueryError
from fisk_ai.knowledge.query import parse_enumerate, search_query
from fisk_ai.knowledge.search import (
    EnumerateAnswer,
    EnumerateStatus,
    SearchStatus,
    chunk_at,
    enumerate_documents,
    parse_citation,
    search,
)
from fisk_ai.knowledge.store import KnowledgeReader, KnowledgeWriter
from tests.knowledge.conftest import index, write_corpus

FILLER = "\n\n".join(["filler text that pads the section out " * 8] * 4)

CORPUS = {
    # "retention" and "policy" sit in two different chunks of one document.
    "split.md": f"# Retention\n\nLogs are kept for retention purposes.\n\n{FILLER}\n\n"
    f"# Later\n\nThe policy is reviewed yearly.\n",
    "both.md": "# Policy\n\nOur retention policy in one paragraph.\n",
    "only.md": "# Other\n\nretention without the other word\n",
    "draft.md": "# Draft\n\nretention policy draft\n",
}


@pytest.fixture
def corpus_reader(store: Path, tmp_path: Path) -> Iterator[KnowledgeReader]:
    index(store, write_corpus(tmp_path / "docs", CORPUS))
    reader = KnowledgeReader(store)
    assert reader.open()
    yield reader
    reader.close()


def _enumerate(reader: KnowledgeReader, query: str) -> EnumerateAnswer:
    with reader.use() as connection:
        return enumerate_documents(connection, query)


def _names(answer: EnumerateAnswer) -> list[str]:
    return sorted(Path(document.path).name for document in answer.documents)


def test_two_words_in_two_chunks_of_one_document_match(corpus_reader: KnowledgeReader) -> None:
    answer = _enumerate(corpus_reader, "retention policy")

    assert answer.status is EnumerateStatus.OK
    assert _names(answer) == ["both.md", "draft.md", "split.md"]
    split = next(d for d in answer.documents if d.path.endswith("split.md"))
    assert split.total_chunks >= 3


def test_a_leading_minus_excludes(corpus_reader: KnowledgeReader) -> None:
    assert _names(_enumerate(corpus_reader, "retention policy -draft")) == ["both.md", "split.md"]


def test_a_quoted_phrase_matches_words_in_order(corpus_reader: KnowledgeReader) -> None:
    assert _names(_enumerate(corpus_reader, '"retention policy"')) == ["both.md", "draft.md"]


def test_heading_and_body_scopes(corpus_reader: KnowledgeReader) -> None:
    heading = _enumerate(corpus_reader, "heading:policy")
    body = _enumerate(corpus_reader, "body:policy")

    assert _names(heading) == ["both.md"]
    assert heading.documents[0].heading_matches == 1
    assert heading.documents[0].body_matches == 0
    assert _names(body) == ["both.md", "draft.md", "split.md"]


def test_terms_report_counts_and_what_was_not_queried(corpus_reader: KnowledgeReader) -> None:
    answer = _enumerate(corpus_reader, "retention x")

    by_term = {report.term: report for report in answer.terms}
    assert by_term["retention"].documents == 4
    assert by_term["retention"].as_written == 4
    assert by_term["x"].not_queried
    assert answer.indexed_documents == 4


def test_stemming_is_reported_as_related_forms(corpus_reader: KnowledgeReader) -> None:
    answer = _enumerate(corpus_reader, "reviewing")

    [report] = answer.terms
    assert _names(answer) == ["split.md"]
    assert report.as_written == 0 and report.documents == 1
    assert report.related_forms == ("reviewed",)


@pytest.mark.parametrize("query", ["retention OR policy", "a AND b", "NOT x", "a NEAR b"])
def test_boolean_operators_are_refused_by_name(query: str) -> None:
    with pytest.raises(QueryError, match="is not an operator"):
        parse_enumerate(query)


def test_a_trailing_star_is_refused() -> None:
    with pytest.raises(QueryError, match="does not support"):
        parse_enumerate("reten*")


def test_an_empty_query_and_an_empty_corpus_are_told_apart(
    corpus_reader: KnowledgeReader, tmp_path: Path
) -> None:
    assert _enumerate(corpus_reader, "a ?").status is EnumerateStatus.QUERY_EMPTY
    empty = tmp_path / "empty-store"
    KnowledgeWriter(empty).__enter__().close()
    reader = KnowledgeReader(empty)
    reader.open()
    assert _enumerate(reader, "retention").status is EnumerateStatus.CORPUS_EMPTY
    with reader.use() as connection:
        assert search(connection, "retention", 5).status is SearchStatus.INDEX_EMPTY
    reader.close()


def test_free_text_becomes_quoted_terms_or_ed_together() -> None:
    query = search_query('How do I "rotate" logs? a NEAR(b) x"y')

    assert query.expression == '"How" OR "do" OR "rotate" OR "logs" OR "NEAR"'
    assert query.dropped == ("I", "a", "b", "x", "y")


def test_search_ranks_and_caps_at_top_k(corpus_reader: KnowledgeReader) -> None:
    with corpus_reader.use() as connection:
        answer = search(connection, "retention policy", 2)

    assert len(answer.hits) == 2
    assert answer.hits[0].path.endswith("both.md")


def test_a_citation_parses_back_to_its_chunk(corpus_reader: KnowledgeReader) -> None:
    with corpus_reader.use() as connection:
        hit = search(connection, "yearly", 1).hits[0]
        path, ordinal = parse_citation(hit.citation)
        found = chunk_at(connection, path, ordinal)

    assert found is not None
    chunk, total = found
    assert chunk.body == hit.body and chunk.heading_path == "Later"
    assert total == ordinal + 1


@pytest.mark.parametrize("text", ["docs/a.md", "docs/a.md#", "#3", "docs/a.md#x"])
def test_a_malformed_citation_is_refused(text: str) -> None:
    with pytest.raises(KnowledgeError, match="not a knowledge citation"):
        parse_citation(text)
