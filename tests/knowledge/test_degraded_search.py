"""A hybrid search that falls back to lexical names the step that failed, from a closed vocabulary,
and no error text."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fisk_ai import config
from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.knowledge.embeddings import DegradeReason
from fisk_ai.knowledge.store import KnowledgeWriter
from tests.knowledge.conftest import RETENTION_CORPUS, write_corpus


class _MalformedEmbeddings:
    """An endpoint that answers every request with a 200 whose body is not JSON."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{not json")

            def log_message(self, *_args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def malformed() -> Iterator[_MalformedEmbeddings]:
    server = _MalformedEmbeddings()
    yield server
    server.server.shutdown()
    server.server.server_close()


def test_a_degraded_search_names_the_failed_step_and_no_error_text(
    tmp_path: Path, malformed: _MalformedEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path / "docs", RETENTION_CORPUS)
    store = tmp_path / "store"
    # Vectors of a model that has since started answering garbage.
    with KnowledgeWriter(store) as writer:
        writer.connection.executescript(
            "CREATE VIRTUAL TABLE chunks_vec USING vec0(chunk_id INTEGER PRIMARY KEY, "
            "embedding FLOAT[2]);"
            "CREATE TRIGGER chunks_ad_vec AFTER DELETE ON chunks BEGIN "
            "DELETE FROM chunks_vec WHERE chunk_id = old.id; END;"
            "INSERT INTO rag_meta VALUES ('model', 'm'), ('dimension', '2'), "
            "('normalized', 'true'), ('query_prefix', ''), ('document_prefix', '');"
        )
    embeddings = config.Embeddings(base_url=malformed.url, model="m", timeout=timedelta(seconds=5))
    knowledge = KnowledgeIndex(store, embeddings)
    try:
        answer = knowledge.search_blocking("retention", 3)
    finally:
        knowledge.close()

    assert answer.degraded is DegradeReason.MALFORMED_RESPONSE
    assert answer.tier == (
        "tier: hybrid -> DEGRADED to lexical (embeddings unreachable: malformed response)"
    )
