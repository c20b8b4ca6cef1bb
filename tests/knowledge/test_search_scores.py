"""Search scores printed so that higher is better, in the lexical and the hybrid tier."""

from __future__ import annotations

from fisk_ai.knowledge.query import search_query
from fisk_ai.knowledge.search import Hit, SearchAnswer, SearchStatus
from fisk_ai.lineui.knowledge import search_lines


def test_scores_are_printed_higher_is_better_in_both_tiers() -> None:
    query = search_query("retention")
    lexical = SearchAnswer(SearchStatus.OK, (Hit("a.md", 0, "", "x", -2.5),), query)
    fused = SearchAnswer(SearchStatus.OK, (Hit("a.md", 0, "", "x", 0.0325),), query, fused=True)

    assert "score 2.50" in search_lines(lexical, full=False)
    assert "rrf 0.0325" in search_lines(fused, full=False)
