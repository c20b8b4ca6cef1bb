"""What the knowledge_search tool hands the model: results free of control bytes, and an index of
titles only not called empty of documents."""

from __future__ import annotations

import json
from pathlib import Path

from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.builtin.knowledge import KnowledgeSearch
from tests.knowledge.conftest import index, write_corpus


async def test_knowledge_search_results_carry_no_control_bytes(store: Path, tmp_path: Path) -> None:
    hostile = "# Esc\x1b[2J\n\nescapeword \x1b]0;title\x07 clears and \x01\x02 controls\n"
    index(store, write_corpus(tmp_path / "docs", {"hostile.md": hostile}))
    tool = KnowledgeSearch(KnowledgeIndex(store), top_k=5, max_injected_tokens=6000)

    outcome = await tool.execute('{"query": "escapeword"}', ExecDeps())

    [result] = json.loads(outcome.output)["results"]
    assert "escapeword" in result["content"]
    for text in (result["content"], result["section"], result["citation"]):
        assert not any(ord(character) < 0x20 and character not in "\n\t" for character in text)


async def test_a_search_of_documents_without_passages_does_not_claim_no_documents(
    store: Path, tmp_path: Path
) -> None:
    index(store, write_corpus(tmp_path / "docs", {"title.md": "# Only a title\n"}))
    tool = KnowledgeSearch(KnowledgeIndex(store), top_k=5, max_injected_tokens=6000)

    result = json.loads((await tool.execute('{"query": "title"}', ExecDeps())).output)

    assert result["status"] == "index_empty"
    assert "no passages" in result["note"] and "no documents" not in result["note"]
