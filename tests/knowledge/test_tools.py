"""The knowledge tools: statuses, the tier line, budgets, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.knowledge.query import search_query
from fisk_ai.knowledge.search import Hit, SearchAnswer, SearchStatus
from fisk_ai.knowledge.store import KnowledgeWriter
from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.builtin.knowledge import (
    KnowledgeEnumerate,
    KnowledgeSearch,
    search_result,
)
from tests.knowledge.conftest import index, write_corpus

LEXICAL = "tier: lexical (FTS5) - no embeddings configured"
DEPS = ExecDeps()


async def _call(tool: KnowledgeSearch | KnowledgeEnumerate, arguments: dict[str, Any]) -> Any:
    outcome = await tool.execute(json.dumps(arguments), DEPS)
    assert not outcome.is_error, outcome.output
    return json.loads(outcome.output)


def _search(store: Path, *, top_k: int = 5, tokens: int = 6000) -> KnowledgeSearch:
    return KnowledgeSearch(KnowledgeIndex(store), top_k=top_k, max_injected_tokens=tokens)


async def test_an_index_never_built_says_so(store: Path) -> None:
    result = await _call(_search(store), {"query": "retention"})

    assert result["status"] == "index_not_built"
    assert result["tier"] == LEXICAL and result["results"] == []
    assert "fisk knowledge index" in result["note"]


async def test_an_empty_index_is_not_an_unbuilt_one(store: Path) -> None:
    KnowledgeWriter(store).__enter__().close()

    result = await _call(_search(store), {"query": "retention"})

    assert result["status"] == "index_empty"


async def test_an_index_built_after_the_host_started_is_found(store: Path, tmp_path: Path) -> None:
    tool = _search(store)
    assert (await _call(tool, {"query": "alpha"}))["status"] == "index_not_built"

    index(store, write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"}))

    result = await _call(tool, {"query": "alpha"})
    assert result["status"] == "ok"
    assert result["results"] == [
        {"citation": f"{(tmp_path / 'docs').as_posix()}/a.md#0", "section": "A", "content": "alpha"}
    ]


async def test_top_k_from_the_call_then_from_the_config(store: Path, tmp_path: Path) -> None:
    files = {f"n{n}.md": f"# N{n}\n\nshared word {n}\n" for n in range(10)}
    index(store, write_corpus(tmp_path / "docs", files))

    assert len((await _call(_search(store, top_k=3), {"query": "shared"}))["results"]) == 3
    called = await _call(_search(store, top_k=3), {"query": "shared", "top_k": 7})
    assert len(called["results"]) == 7


async def test_top_k_beyond_the_ceiling_is_an_error_result(store: Path) -> None:
    outcome = await _search(store).execute('{"query": "x", "top_k": 21}', DEPS)

    assert outcome.is_error


def _answer(*bodies: str) -> SearchAnswer:
    hits = tuple(Hit("d.md", n, "", body, -1.0) for n, body in enumerate(bodies))
    return SearchAnswer(SearchStatus.OK, hits, search_query("q"))


def test_the_budget_stops_adding_hits_and_says_so() -> None:
    result = search_result(_answer("a" * 30, "b" * 30, "c" * 30), budget_characters=70)

    assert [hit["citation"] for hit in result["results"]] == ["d.md#0", "d.md#1"]
    assert "1 more passages" in result["note"]


def test_the_first_hit_is_kept_however_large() -> None:
    result = search_result(_answer("a" * 500, "b"), budget_characters=10)

    assert [hit["content"] for hit in result["results"]] == ["a" * 500]


async def test_enumerate_answers_with_the_digest_shape(store: Path, tmp_path: Path) -> None:
    index(store, write_corpus(tmp_path / "docs", {"a.md": "# Retention\n\npolicy\n"}))
    tool = KnowledgeEnumerate(KnowledgeIndex(store), top_k=5, max_injected_tokens=6000)

    result = await _call(tool, {"query": "retention policy"})

    assert result["tier"] == "tier: lexical (FTS5) - matching is complete, never ranked"
    assert result["status"] == "ok"
    assert (result["matched"], result["returned"], result["truncated"]) == (1, 1, False)
    assert result["indexed_documents"] == 1
    assert result["note"]
    assert result["documents"] == [
        {
            "citation": f"{(tmp_path / 'docs').as_posix()}/a.md#0",
            "body_matches": 1,
            "heading_matches": 1,
            "total_chunks": 1,
        }
    ]
    assert [term["term"] for term in result["terms"]] == ["retention", "policy"]


async def test_enumerate_gets_a_quarter_of_the_budget_and_at_least_one(
    store: Path, tmp_path: Path
) -> None:
    files = {f"doc{n:03d}.md": f"# D\n\nneedle {n}\n" for n in range(200)}
    index(store, write_corpus(tmp_path / "docs", files))

    wide = await _call(
        KnowledgeEnumerate(KnowledgeIndex(store), top_k=5, max_injected_tokens=6000),
        {"query": "needle"},
    )
    tiny = await _call(
        KnowledgeEnumerate(KnowledgeIndex(store), top_k=5, max_injected_tokens=1),
        {"query": "needle"},
    )

    per_document = len(json.dumps(wide["documents"][0], separators=(",", ":")))
    assert wide["matched"] == 200 and wide["truncated"]
    assert wide["returned"] == 6000 * 4 // 4 // per_document
    assert tiny["returned"] == 1 and tiny["matched"] == 200
    assert "200" not in tiny["note"] and "more documents matched" in tiny["note"]


async def test_a_rejected_operator_is_an_error_result_naming_it(
    store: Path, tmp_path: Path
) -> None:
    index(store, write_corpus(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"}))
    tool = KnowledgeEnumerate(KnowledgeIndex(store), top_k=5, max_injected_tokens=6000)

    outcome = await tool.execute('{"query": "a OR b"}', DEPS)

    assert outcome.is_error and '"OR" is not an operator' in outcome.output


@pytest.mark.parametrize("tool_class", [KnowledgeSearch, KnowledgeEnumerate])
def test_the_tools_are_traced_by_query_and_never_served_over_a2a(
    store: Path, tool_class: type[KnowledgeSearch] | type[KnowledgeEnumerate]
) -> None:
    tool = tool_class(KnowledgeIndex(store), top_k=5, max_injected_tokens=6000)

    assert tool.display('{"query": "retention policy"}') == f"{tool.name} retention policy"
    assert not tool.a2a_exposable
    assert not tool.definition(defer_loading=True).defer_loading
