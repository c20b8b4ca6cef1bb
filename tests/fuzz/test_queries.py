"""The knowledge tools' queries, whatever the model writes, against a real index: a search or an
enumerate answers, or refuses the query with one sentence (QueryError); SQLite never sees a
query it cannot parse."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import event, given
from hypothesis import strategies as st

from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.knowledge.errors import QueryError
from tests.knowledge.conftest import index, write_corpus

_SCRATCH = tempfile.TemporaryDirectory(prefix="fisk-fuzz-knowledge-")
_STORE = Path(_SCRATCH.name) / "knowledge"
index(
    _STORE,
    write_corpus(
        Path(_SCRATCH.name) / "docs",
        {
            "restart.md": "# Restart\n\nRestart the web service with `service restart web`.\n",
            "streams.md": "# Streams\n\n## ORDERS\n\nThe ORDERS stream keeps 30 days.\n",
        },
    ),
)
_INDEX = KnowledgeIndex(_STORE)

# What a model might type into a query language: words, quotes, scopes, operators, FTS5 syntax.
_PIECES = st.sampled_from(
    [
        '"',
        "-",
        "*",
        ":",
        "(",
        ")",
        "^",
        "NEAR(",
        "OR",
        "AND",
        "NOT",
        "heading:",
        "body:",
        "restart",
        "ORDERS",
        "stream",
        "30",
        "'",
        "\\",
        "{",
        "}",
        "+",
        ".",
        "\x00",
        "\u202e",
    ]
)
QUERIES = st.lists(_PIECES | st.text(max_size=8), max_size=8).map(" ".join) | st.text(max_size=40)


@given(QUERIES)
def test_a_search_answers_or_refuses_the_query(text: str) -> None:
    try:
        answer = _INDEX.search_blocking(text, 3)
    except QueryError:
        event("refused")
        return
    event(f"status {answer.status.value}")


@given(QUERIES)
def test_an_enumerate_answers_or_refuses_the_query(text: str) -> None:
    try:
        answer = asyncio.run(_INDEX.enumerate(text))
    except QueryError:
        event("refused")
        return
    event(f"status {answer.status.value}")
