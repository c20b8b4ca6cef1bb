"""A fake OpenAI embeddings endpoint on loopback whose vectors fold synonyms together, the corpus it
tells apart, and an index built through it."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from fisk_ai import config
from fisk_ai.knowledge.access import wanted_manifest
from fisk_ai.knowledge.embeddings import Embedder
from fisk_ai.knowledge.indexing import index_files, vector_embed, walk
from fisk_ai.knowledge.store import KnowledgeWriter

DIMENSION = 16

# Words the fake embeds alike, so a question in other words still lands on the passage.
SYNONYMS = {"reboot": "restart", "bounce": "restart", "machine": "server", "host": "server"}


def fake_vector(text: str) -> list[float]:
    """A hashed bag of words with synonyms folded together: deterministic and meaningful."""
    vector = [0.0] * DIMENSION
    for written in re.findall(r"[a-z]+", text.lower()):
        word = SYNONYMS.get(written, written)
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMENSION] += 1.0
    return vector


class FakeEmbeddings:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                fake.authorizations.append(self.headers.get("Authorization"))
                data = [
                    {"object": "embedding", "index": i, "embedding": fake_vector(text)}
                    for i, text in enumerate(body["input"])
                ]
                payload = json.dumps({"object": "list", "data": data, "model": body["model"]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *_args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def settings(url: str, model: str = "fake-1") -> config.Embeddings:
    return config.Embeddings(base_url=url, model=model, timeout=timedelta(seconds=2))


CORPUS = {
    "ops/restart.md": "# Restarting\n\nTo restart the server, drain it first.\n",
    "ops/disk.md": "# Disks\n\nA full disk stops the reboot of nothing; clean the logs.\n",
    "ops/other.md": "# Other\n\nNothing about that here at all.\n",
}


def build(store: Path, root: Path, embeddings: config.Embeddings, *, rebuild: bool = False) -> None:
    embedder = Embedder(embeddings)
    wanted = wanted_manifest(embeddings, embedder.probe())
    with KnowledgeWriter(store, rebuild=rebuild) as writer:
        writer.plan_vectors(wanted)
        files = list(walk([str(root)], store))
        report = index_files(
            writer, writer.documents(), files, reconcile=True, embed=vector_embed(embedder)
        )
    assert report.embeddings == report.chunks == 3
    assert "3 embeddings" in report.line()
