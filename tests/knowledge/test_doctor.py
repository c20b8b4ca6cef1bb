"""`fisk knowledge doctor`'s embeddings checks: the embedder answers with the manifest's
dimension, and the manifest names the configured model, against the fake OpenAI endpoint on
loopback driven through the real HTTP client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fisk_ai.cli.main import main
from fisk_ai.knowledge.access import wanted_manifest
from fisk_ai.knowledge.doctor import Check, CheckState, diagnose
from fisk_ai.knowledge.store import KnowledgeWriter
from tests.knowledge.conftest import write_corpus
from tests.knowledge.fake_embeddings import CORPUS, DIMENSION, FakeEmbeddings, build, settings


@pytest.fixture
def endpoint() -> Iterator[FakeEmbeddings]:
    server = FakeEmbeddings()
    yield server
    server.stop()


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, CORPUS)
    return Path("ops")


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


def test_an_endpoint_answering_the_manifest_dimension_passes(
    tmp_path: Path, corpus: Path, endpoint: FakeEmbeddings
) -> None:
    store = tmp_path / "store"
    build(store, corpus, settings(endpoint.url))

    checks = by_name(diagnose(store, [str(corpus)], embeddings=settings(endpoint.url)))

    assert checks["Embeddings reachable"].state is CheckState.PASSED
    assert checks["Embeddings reachable"].detail == (
        f"the embeddings endpoint {endpoint.url} answered with {DIMENSION} dimensions"
    )
    assert checks["Manifest matches model"].state is CheckState.PASSED
    assert checks["Manifest matches model"].detail == f"model=fake-1 dim={DIMENSION}"
    assert checks["Format"].detail == "format version 2"
    assert not any(check.fatal for check in checks.values())


def test_an_unreachable_endpoint_fails_its_check_but_not_the_doctor(
    tmp_path: Path, corpus: Path, endpoint: FakeEmbeddings
) -> None:
    store = tmp_path / "store"
    build(store, corpus, settings(endpoint.url))
    endpoint.stop()

    checks = by_name(diagnose(store, [str(corpus)], embeddings=settings(endpoint.url)))

    reachable = checks["Embeddings reachable"]
    assert reachable.state is CheckState.FAILED and not reachable.fatal
    assert "connect failed" in reachable.detail
    # The model is still compared; only the dimension waits for an answer.
    manifest = checks["Manifest matches model"]
    assert manifest.state is CheckState.PASSED
    assert "the dimension was not compared" in manifest.detail


def test_another_model_than_the_manifest_is_fatal_and_names_reindex(
    tmp_path: Path, corpus: Path, endpoint: FakeEmbeddings
) -> None:
    store = tmp_path / "store"
    build(store, corpus, settings(endpoint.url))

    checks = by_name(
        diagnose(store, [str(corpus)], embeddings=settings(endpoint.url, model="fake-2"))
    )

    manifest = checks["Manifest matches model"]
    assert manifest.state is CheckState.FAILED and manifest.fatal
    assert "embeddings model 'fake-1'" in manifest.detail and "'fake-2'" in manifest.detail
    assert "fisk knowledge index --reindex" in manifest.detail


def test_a_dimension_other_than_the_manifest_is_fatal(
    tmp_path: Path, endpoint: FakeEmbeddings
) -> None:
    store = tmp_path / "store"
    # An index whose vectors were 8 wide; the endpoint now answers 16.
    with KnowledgeWriter(store) as writer:
        writer.plan_vectors(wanted_manifest(settings(endpoint.url), 8))

    checks = by_name(diagnose(store, [], embeddings=settings(endpoint.url)))

    manifest = checks["Manifest matches model"]
    assert manifest.state is CheckState.FAILED and manifest.fatal
    assert f"holds 8-dimension vectors but fake-1 now answers with {DIMENSION}" in (manifest.detail)


def test_a_lexical_index_with_embeddings_configured_fails_the_manifest_check(
    tmp_path: Path, corpus: Path, endpoint: FakeEmbeddings
) -> None:
    from tests.knowledge.conftest import index

    store = tmp_path / "store"
    index(store, corpus)

    manifest = by_name(diagnose(store, [str(corpus)], embeddings=settings(endpoint.url)))[
        "Manifest matches model"
    ]

    assert manifest.state is CheckState.FAILED and manifest.fatal
    assert "indexed without embeddings" in manifest.detail


def test_without_an_index_the_manifest_check_does_not_run(
    tmp_path: Path, endpoint: FakeEmbeddings
) -> None:
    checks = by_name(diagnose(tmp_path / "store", [], embeddings=settings(endpoint.url)))

    assert checks["Embeddings reachable"].state is CheckState.PASSED
    assert checks["Manifest matches model"].state is CheckState.NOT_RUN
    assert checks["Manifest matches model"].detail == "no index is built"


def test_without_embeddings_the_doctor_says_lexical_only(tmp_path: Path) -> None:
    checks = by_name(diagnose(tmp_path / "store", [], embeddings=None))

    assert checks["Embeddings"].state is CheckState.PASSED
    assert checks["Embeddings"].detail == "not configured (lexical-only)"
    assert "Manifest matches model" not in checks


def test_the_doctor_command_exits_1_on_a_model_mismatch(
    tmp_path: Path,
    corpus: Path,
    endpoint: FakeEmbeddings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("FISK_AI_STORE_DIR", raising=False)
    build(tmp_path / "knowledge" / "ops", corpus, settings(endpoint.url))
    agent_yaml = (
        "identity: ops\nsystem_prompt: hi\nharness:\n  knowledge:\n    enabled: true\n"
        f"    paths: [ops]\n    embeddings:\n      base_url: {endpoint.url}\n"
        "      model: {model}\n"
    )
    (tmp_path / "agent.yaml").write_text(agent_yaml.replace("{model}", "fake-1"))
    assert main(["knowledge", "doctor"]) == 0
    assert "ok    Manifest matches model: model=fake-1" in capsys.readouterr().out

    (tmp_path / "agent.yaml").write_text(agent_yaml.replace("{model}", "fake-2"))
    assert main(["knowledge", "doctor"]) == 1
    out = capsys.readouterr().out
    assert f"ok    Embeddings reachable: the embeddings endpoint {endpoint.url}" in out
    assert "FAIL  Manifest matches model:" in out
