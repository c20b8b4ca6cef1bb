"""Embeddings and hybrid search against a fake OpenAI embeddings endpoint on loopback, driven
through the real HTTP client."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from fisk_ai import config
from fisk_ai.knowledge import FormatMismatch
from fisk_ai.knowledge.access import KnowledgeIndex, wanted_manifest
from fisk_ai.knowledge.embeddings import Embedder
from fisk_ai.knowledge.indexing import index_files, walk
from fisk_ai.knowledge.search import LEXICAL_TIER
from fisk_ai.knowledge.store import KnowledgeWriter
from tests.knowledge.conftest import write_corpus
from tests.knowledge.fake_embeddings import CORPUS, DIMENSION, FakeEmbeddings, build, settings


@pytest.fixture
def fake() -> Iterator[FakeEmbeddings]:
    server = FakeEmbeddings()
    yield server
    server.stop()


def test_hybrid_finds_the_passage_a_synonym_names(
    tmp_path: Path, fake: FakeEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, CORPUS)
    store = tmp_path / "store"
    build(store, Path("ops"), settings(fake.url))

    lexical = KnowledgeIndex(store)
    hybrid = KnowledgeIndex(store, settings(fake.url))
    try:
        words = lexical.search_blocking("bounce machine", 1)
        fused = hybrid.search_blocking("bounce machine", 1)
    finally:
        lexical.close()
        hybrid.close()

    assert words.tier == LEXICAL_TIER
    # No word of the question is in the corpus; the vectors know bounce means restart.
    assert [hit.citation for hit in words.hits] == []
    assert fused.tier == f"tier: hybrid (FTS5 + vectors, RRF) - model=fake-1 dim={DIMENSION}"
    assert [hit.citation for hit in fused.hits] == ["ops/restart.md#0"]
    assert fake.requests[0]["input"] == ["dimension probe"]
    assert fake.requests[-1]["model"] == "fake-1"


def test_an_unreachable_endpoint_degrades_to_lexical_and_is_counted(
    tmp_path: Path, fake: FakeEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, CORPUS)
    store = tmp_path / "store"
    build(store, Path("ops"), settings(fake.url))
    fake.stop()

    index = KnowledgeIndex(store, settings(fake.url))
    try:
        answer = index.search_blocking("restart", 2)
    finally:
        index.close()

    assert answer.tier == (
        "tier: hybrid -> DEGRADED to lexical (embeddings unreachable: connect failed)"
    )
    assert [hit.citation for hit in answer.hits] == ["ops/restart.md#0"]
    assert index.degraded_searches == 1


def test_a_model_change_is_refused_naming_reindex(
    tmp_path: Path, fake: FakeEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, CORPUS)
    store = tmp_path / "store"
    build(store, Path("ops"), settings(fake.url))

    index = KnowledgeIndex(store, settings(fake.url, model="fake-2"))
    try:
        with pytest.raises(FormatMismatch, match="fisk knowledge index --reindex"):
            index.search_blocking("restart", 1)
    finally:
        index.close()
    with KnowledgeWriter(store) as writer, pytest.raises(FormatMismatch, match="not configured"):
        writer.plan_vectors(None)


def test_a_lexical_index_is_refused_when_embeddings_are_configured(
    tmp_path: Path, fake: FakeEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, CORPUS)
    store = tmp_path / "store"
    with KnowledgeWriter(store) as writer:
        index_files(writer, {}, list(walk(["ops"], store)), reconcile=True)

    with KnowledgeWriter(store) as writer, pytest.raises(FormatMismatch, match="--reindex"):
        writer.plan_vectors(wanted_manifest(settings(fake.url), DIMENSION))
    # --reindex drops everything, and the vector tier is planned on the empty index.
    build(store, Path("ops"), settings(fake.url), rebuild=True)


def test_the_files_embeddings_keys_shape_every_request(
    tmp_path: Path, fake: FakeEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FISK_TEST_EMBEDDINGS_KEY", "sk-embed-0123")
    write_corpus(tmp_path, CORPUS)
    cfg = config.parse(
        "harness:\n  knowledge:\n    enabled: true\n    embeddings:\n"
        f"      base_url: {fake.url}\n"
        "      model: fake-9\n"
        "      api_key_env: FISK_TEST_EMBEDDINGS_KEY\n"
        "      query_prefix: 'query: '\n"
        "      document_prefix: 'passage of {title}: '\n",
        config.Mode.LENIENT,
    )
    embeddings = cfg.harness.knowledge.embeddings
    assert embeddings is not None
    store = tmp_path / "store"
    build(store, Path("ops"), embeddings)
    index = KnowledgeIndex(store, embeddings)
    try:
        index.search_blocking("bounce machine", 1)
    finally:
        index.close()

    documents = [text for request in fake.requests[1:-1] for text in request["input"]]
    assert sorted(documents)[0].startswith("passage of Disks: ")
    assert all(text.startswith("passage of ") for text in documents)
    assert fake.requests[-1]["input"] == ["query: bounce machine"]
    assert {request["model"] for request in fake.requests} == {"fake-9"}
    assert set(fake.authorizations) == {"Bearer sk-embed-0123"}


def test_the_embeddings_timeout_bounds_an_endpoint_that_never_answers() -> None:
    import socket
    import time

    from fisk_ai.knowledge.embeddings import EmbeddingsUnavailable

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        settings = config.Embeddings(
            base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=timedelta(milliseconds=300)
        )
        started = time.monotonic()
        with pytest.raises(EmbeddingsUnavailable, match=r"timeout \(after 0\.3s\)"):
            Embedder(settings).probe()
    # The default of 30s would hold the call far longer.
    assert time.monotonic() - started < 10
