"""knowledge_enumerate's query language and answers as the Go fisk-ai gives them.

The cases are Go's own (its enumerate_query_test.go and enumerate_test.go), restated: the forms
it compiles and the MATCH text each becomes, the forms it refuses, the 40-term cap, and, over
Go's five-document corpus, the sets, the citations of the first matching chunk, and the
documents' mtimes in seconds.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fisk_ai.knowledge import QueryError
from fisk_ai.knowledge.query import EnumerateQuery, parse_enumerate, search_query
from fisk_ai.knowledge.search import EnumerateAnswer, EnumerateStatus, enumerate_documents
from fisk_ai.knowledge.store import KnowledgeReader, stored_documents
from tests.knowledge.conftest import index, write_corpus


def matches(query: EnumerateQuery) -> list[str]:
    """The MATCH text of each term, included then excluded, as Go's spec helper lists it."""
    return [term.expression() for term in (*query.included, *query.excluded)]


def test_side_by_side_terms_are_separate_document_set_queries() -> None:
    query = parse_enumerate("deprecated api")

    assert matches(query) == ['"deprecated"', '"api"']
    assert query.compiled() == '"deprecated" AND "api"'


def test_a_quoted_phrase_is_one_term() -> None:
    query = parse_enumerate('"retention policy" api')

    assert query.included[0].phrase
    assert matches(query) == ['"retention policy"', '"api"']


def test_a_leading_minus_subtracts() -> None:
    query = parse_enumerate("api -deprecated")

    assert [term.surface for term in query.excluded] == ["deprecated"]
    assert query.compiled() == '"api" AND -"deprecated"'


def test_a_field_compiles_to_its_column() -> None:
    query = parse_enumerate("heading:deprecated body:api")

    assert matches(query) == ['heading_path:"deprecated"', 'body:"api"']
    assert query.compiled() == 'heading:"deprecated" AND body:"api"'


def test_a_field_combines_with_an_exclusion() -> None:
    assert matches(parse_enumerate("api -heading:deprecated")) == [
        '"api"',
        'heading_path:"deprecated"',
    ]


def test_a_doubled_quote_inside_a_phrase_is_one_literal_quote() -> None:
    query = parse_enumerate('"say ""hi"" now"')

    assert [term.surface for term in query.terms] == ['say "hi" now']
    assert matches(query) == ['"say ""hi"" now"']


def test_punctuation_stays_inside_the_quoted_term() -> None:
    assert matches(parse_enumerate("kube-proxy v2.1")) == ['"kube-proxy"', '"v2.1"']


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("foo OR bar", "is not an operator"),
        ("foo or bar", "is not an operator"),
        ("foo AND bar", "side by side"),
        ("foo NOT bar", "leading minus"),
        ("foo NEAR bar", "proximity is not supported"),
        ("deprecat*", "does not support"),
        ("*deprecated", "does not support"),
        ("foo*bar", "does not support"),
        ("api *", "does not support"),
        ("title:deprecated", '"title:" is not a field'),
        ("body:", "names a field but no word"),
        ("-deprecated -api", "nothing to exclude from"),
        ("api -", "excludes nothing"),
        ('api "retention policy', "unbalanced quote"),
    ],
)
def test_what_go_refuses_is_refused_with_one_sentence(query: str, wanted: str) -> None:
    with pytest.raises(QueryError, match=wanted) as refused:
        parse_enumerate(query)

    assert "\n" not in str(refused.value)


def test_a_one_character_term_is_reported_not_queried() -> None:
    query = parse_enumerate("api a")

    assert [term.surface for term in query.terms] == ["api"]
    assert [word for word, _ in query.not_queried] == ["a"]


def test_a_short_phrase_is_queried() -> None:
    query = parse_enumerate('"a b"')

    assert [term.surface for term in query.terms] == ["a b"]
    assert query.not_queried == ()


def test_a_blank_query_compiles_to_nothing() -> None:
    query = parse_enumerate("   ")

    assert (query.terms, query.not_queried) == ((), ())


def test_at_most_forty_terms_are_compiled() -> None:
    query = parse_enumerate("term " * 200)

    assert len(query.terms) == 40
    assert len(query.not_queried) == 160


GO_CORPUS = {
    "split.md": "# Storage\n\n## Retention\n\nRecords are held for ninety days and then "
    "removed.\n\n## Limits\n\nThe policy is set per account and cannot be raised by a request.\n",
    "together.md": "# Retention policy\n\nThe retention policy is reviewed each release. A "
    "retention policy change is announced ahead of time.\n",
    "api.md": "# API\n\nThe API is versioned per endpoint. A deprecated endpoint keeps answering "
    "until it is removed.\n",
    "deprecation.md": "# Deprecation\n\nInterfaces are deprecated two releases before removal. "
    "Deprecating an interface starts the clock.\n",
    "unrelated.md": "# Authentication\n\nTokens are validated against the issuer.\n",
}


@pytest.fixture
def go_corpus(tmp_path: Path) -> Iterator[KnowledgeReader]:
    store = tmp_path / "knowledge" / "docs"
    index(store, write_corpus(tmp_path / "docs", GO_CORPUS))
    reader = KnowledgeReader(store)
    assert reader.open()
    yield reader
    reader.close()


def enumerate_in(reader: KnowledgeReader, query: str, **options: int) -> EnumerateAnswer:
    with reader.use() as connection:
        return enumerate_documents(connection, query, **options)


def names(answer: EnumerateAnswer) -> list[str]:
    return sorted(Path(document.path).name for document in answer.documents)


def test_terms_in_two_chunks_of_one_document_match_it(go_corpus: KnowledgeReader) -> None:
    assert names(enumerate_in(go_corpus, "retention policy")) == ["split.md", "together.md"]


def test_an_excluded_term_subtracts(go_corpus: KnowledgeReader) -> None:
    assert names(enumerate_in(go_corpus, "deprecated")) == ["api.md", "deprecation.md"]
    assert names(enumerate_in(go_corpus, "deprecated -endpoint")) == ["deprecation.md"]


def test_a_scoped_term_looks_in_its_column_only(go_corpus: KnowledgeReader) -> None:
    assert names(enumerate_in(go_corpus, "heading:retention")) == ["split.md", "together.md"]
    assert names(enumerate_in(go_corpus, "body:retention")) == ["together.md"]


def test_a_phrase_matches_only_adjacent_words(go_corpus: KnowledgeReader) -> None:
    assert names(enumerate_in(go_corpus, '"retention policy"')) == ["together.md"]


def test_the_citation_names_the_first_matching_chunk(go_corpus: KnowledgeReader) -> None:
    [document] = enumerate_in(go_corpus, "limits").documents

    assert document.citation.endswith("docs/split.md#1")


def test_a_minimum_of_body_matches_filters_the_set(go_corpus: KnowledgeReader) -> None:
    assert names(enumerate_in(go_corpus, "retention", min_body_matches=1)) == ["together.md"]


def test_a_query_of_short_words_only_is_query_empty(go_corpus: KnowledgeReader) -> None:
    answer = enumerate_in(go_corpus, "a b")

    assert answer.status is EnumerateStatus.QUERY_EMPTY
    assert [report.term for report in answer.terms] == ["a", "b"]


def test_the_terms_are_reported_by_their_surface(go_corpus: KnowledgeReader) -> None:
    answer = enumerate_in(go_corpus, "retention -heading:policy")

    assert [report.term for report in answer.terms] == ["retention", "policy"]
    assert answer.query.compiled() == '"retention" AND -heading:"policy"'


def test_documents_store_their_mtime_in_seconds(go_corpus: KnowledgeReader) -> None:
    with go_corpus.use() as connection:
        stored = stored_documents(connection)

    for path, document in stored.items():
        assert document.mtime == Path(path).stat().st_mtime_ns // 1_000_000_000


RELATED_CORPUS = {
    "a.md": "# A\n\nThis interface is deprecated.\n",
    "b.md": "# B\n\nThe deprecation is announced early.\n",
    "c.md": "# C\n\nWe deprecate interfaces slowly.\n",
}


def reader_over(tmp_path: Path, corpus: dict[str, str]) -> KnowledgeReader:
    store = tmp_path / "knowledge" / "docs"
    index(store, write_corpus(tmp_path / "docs", corpus))
    reader = KnowledgeReader(store)
    assert reader.open()
    return reader


def test_the_other_forms_behind_a_stemmed_count_are_named(tmp_path: Path) -> None:
    reader = reader_over(tmp_path, RELATED_CORPUS)
    [report] = enumerate_in(reader, "deprecated").terms
    reader.close()

    assert (report.documents, report.as_written) == (3, 1)
    assert sorted(report.related_forms) == ["deprecate", "deprecation"]


def test_no_forms_are_named_when_the_counts_agree(tmp_path: Path) -> None:
    reader = reader_over(tmp_path, {"a.md": RELATED_CORPUS["a.md"]})
    [report] = enumerate_in(reader, "deprecated").terms
    reader.close()

    assert (report.documents, report.as_written) == (1, 1)
    assert report.related_forms == ()


def test_the_forms_named_are_the_most_common_first_and_at_most_five(tmp_path: Path) -> None:
    forms = [
        "connects",
        "connected",
        "connecting",
        "connection",
        "connections",
        "connectivity",
        "connect",
    ]
    # The n-th form is in n documents, so the order by documents is the reverse.
    corpus = {
        f"doc{number}.md": "# T\n\n" + " ".join(forms[: len(forms) - number]) + " .\n"
        for number in range(len(forms))
    }
    reader = reader_over(tmp_path, corpus)
    [report] = enumerate_in(reader, "connect").terms
    reader.close()

    assert report.related_forms == (
        "connects",
        "connected",
        "connecting",
        "connection",
        "connections",
    )


def test_documents_are_ordered_by_all_their_matching_chunks_then_by_path(tmp_path: Path) -> None:
    # b.md matches in two headings and no body; a.md in one body: Go's order counts both.
    corpus = {
        "a.md": "# One\n\nThe quota applies.\n",
        "b.md": "# Quota\n\nFirst part.\n\n## Quota again\n\nSecond part.\n",
        "c.md": "# Quota\n\nOnly here.\n",
    }
    reader = reader_over(tmp_path, corpus)
    answer = enumerate_in(reader, "quota")
    reader.close()

    assert [Path(document.path).name for document in answer.documents] == [
        "b.md",
        "a.md",
        "c.md",
    ]


@pytest.mark.parametrize(
    ("text", "expression"),
    [
        ("how does backpressure work", '"how" OR "does" OR "backpressure" OR "work"'),
        ("a bb ccc", '"bb" OR "ccc"'),
        ('drop" table; injection', '"drop" OR "table" OR "injection"'),
        ("   ", ""),
        ("! @ # $", ""),
        ("retention retention policy", '"retention" OR "retention" OR "policy"'),
        ("x² snake_case", '"snake" OR "case"'),
    ],
)
def test_free_text_becomes_the_match_text_go_builds(text: str, expression: str) -> None:
    assert search_query(text).expression == expression


def test_free_text_asks_for_the_first_forty_words_repeats_included() -> None:
    assert search_query("term " * 200).expression == " OR ".join(['"term"'] * 40)
