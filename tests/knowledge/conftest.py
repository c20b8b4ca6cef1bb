"""Corpora, stores and projects for the knowledge tests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from fisk_ai.knowledge.indexing import IndexReport, index_files, walk
from fisk_ai.knowledge.store import KnowledgeReader, KnowledgeWriter


def write_corpus(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def index(store: Path, *roots: Path, reconcile: bool = True, rebuild: bool = False) -> IndexReport:
    with KnowledgeWriter(store, rebuild=rebuild) as writer:
        files = list(walk([str(root) for root in roots], store))
        return index_files(writer, writer.documents(), files, reconcile=reconcile)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "knowledge" / "ops"


@pytest.fixture
def reader(store: Path) -> Iterator[KnowledgeReader]:
    opened = KnowledgeReader(store)
    yield opened
    opened.close()


AGENT_YAML = (
    "identity: ops\nsystem_prompt: hi\n"
    "harness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n"
)

RETENTION_CORPUS = {
    "retention.md": "# Retention\n\nLogs are kept thirty days.\n",
    "draft.md": "# Draft\n\nretention draft, kept for now\n",
    "policy.md": "# Policy\n\nretention appears in the body here.\n\n# More\n\nretention again.\n",
}


@pytest.fixture
def cli_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory of a project whose agent.yaml indexes docs/, which holds
    ``RETENTION_CORPUS``; nothing indexed yet."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISK_AI_STORE_DIR", raising=False)
    (tmp_path / "agent.yaml").write_text(AGENT_YAML)
    write_corpus(tmp_path / "docs", RETENTION_CORPUS)
    return tmp_path


@pytest.fixture
def indexed_project(cli_project: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """``cli_project`` after `fisk knowledge index`."""
    from fisk_ai.cli.main import main

    assert main(["knowledge", "index"]) == 0
    capsys.readouterr()
    return cli_project
