"""Corpora and stores for the knowledge tests."""

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
