"""`fisk knowledge match`: a leading-dash word read as an exclusion, --min-matches, --explain, and
the citations it lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.cli.main import main


def test_match_reads_a_leading_dash_word_as_an_exclusion(
    indexed_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "match", "retention", "-draft", "--paths-only"]) == 0
    assert capsys.readouterr().out.split() == ["docs/policy.md", "docs/retention.md"]

    assert main(["knowledge", "match", "retention", "--limit", "5", "-draft", "--paths-only"]) == 0
    assert capsys.readouterr().out.split() == ["docs/policy.md", "docs/retention.md"]


def test_match_min_matches_keeps_documents_matching_that_often_in_the_body(
    indexed_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "match", "retention", "--min-matches", "2", "--paths-only"]) == 0

    assert capsys.readouterr().out.split() == ["docs/policy.md"]


def test_match_explain_prints_the_compiled_expression_and_each_term(
    indexed_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "match", "retention", "-draft", "--explain"]) == 0

    out = capsys.readouterr().out
    assert 'compiled: "retention" AND -"draft"' in out
    assert "WORD       AS WRITTEN  ANY FORM" in out


def test_match_lists_citations_of_the_first_matching_chunk(
    indexed_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "match", "again"]) == 0

    assert "docs/policy.md#1" in capsys.readouterr().out
