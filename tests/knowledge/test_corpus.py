"""A generated corpus of a few thousand markdown files, indexed once and searched lexically and
hybrid (the fake OpenAI embeddings endpoint of fake_embeddings, reached through the real HTTP
client): the documents a query names rank first."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fisk_ai.knowledge.access import KnowledgeIndex, wanted_manifest
from fisk_ai.knowledge.embeddings import Embedder
from fisk_ai.knowledge.indexing import index_files, vector_embed, walk
from fisk_ai.knowledge.search import LEXICAL_TIER
from fisk_ai.knowledge.store import KnowledgeWriter
from tests.knowledge import fake_embeddings
from tests.knowledge.fake_embeddings import FakeEmbeddings, settings

FILES = 2000
# Wide enough that a few thousand random documents do not crowd the planted ones in vectors.
DIMENSION = 512
PLANTED = {
    "corpus/ops/restart.md": "# Restarting\n\nTo restart the server, drain it first.\n",
    "corpus/ops/quorum.md": "# Quorum\n\nA zephyr quorum needs three voters in two zones.\n",
}


def filler(number: int, words: list[str], generator: random.Random) -> str:
    """One document: a heading, a word only it holds (marker NNNNN), and random words."""
    body = " ".join(generator.choices(words, k=60))
    return f"# Note {number}\n\nmarker{number:05d} {body}\n"


@dataclass
class Corpus:
    root: Path
    store: Path
    url: str


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[Corpus]:
    patch = pytest.MonkeyPatch()
    patch.setattr(fake_embeddings, "DIMENSION", DIMENSION)
    fake = FakeEmbeddings()
    root = tmp_path
    patch.chdir(root)
    try:
        generator = random.Random(7)
        letters = "bcdfghjklmnpqrstvwxz"
        words = ["".join(generator.choices(letters, k=6)) for _ in range(3000)]
        for number in range(FILES):
            path = root / "corpus" / f"area{number % 40:02d}" / f"note{number:05d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(filler(number, words, generator))
        for name, text in PLANTED.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        store = root / "store"
        embedder = Embedder(settings(fake.url))
        wanted = wanted_manifest(settings(fake.url), embedder.probe())
        with KnowledgeWriter(store) as writer:
            writer.plan_vectors(wanted)
            files = list(walk(["corpus"], store))
            report = index_files(
                writer, writer.documents(), files, reconcile=True, embed=vector_embed(embedder)
            )
        assert report.added == report.chunks == report.embeddings == FILES + len(PLANTED)
        yield Corpus(root, store, fake.url)
    finally:
        fake.stop()
        patch.undo()


def first_citations(index: KnowledgeIndex, query: str, top_k: int = 3) -> list[str]:
    return [hit.citation for hit in index.search_blocking(query, top_k).hits]


def test_a_generated_corpus_ranks_the_named_documents_first(corpus: Corpus) -> None:
    """One build serves both tiers (the build is most of the time)."""
    index = KnowledgeIndex(corpus.store)
    try:
        answer = index.search_blocking("zephyr quorum", 3)
        assert answer.tier == LEXICAL_TIER
        assert [hit.citation for hit in answer.hits] == ["corpus/ops/quorum.md#0"]
        for number in (0, 1234, FILES - 1):
            cited = f"corpus/area{number % 40:02d}/note{number:05d}.md#0"
            assert first_citations(index, f"marker{number:05d}")[0] == cited
        # No word of the question is in the corpus: lexical search finds nothing.
        assert first_citations(index, "bounce machine") == []
    finally:
        index.close()

    index = KnowledgeIndex(corpus.store, settings(corpus.url))
    try:
        answer = index.search_blocking("bounce machine", 3)
        assert answer.tier == f"tier: hybrid (FTS5 + vectors, RRF) - model=fake-1 dim={DIMENSION}"
        # Only the vectors know bounce means restart and machine means server.
        assert answer.hits[0].citation == "corpus/ops/restart.md#0"
        assert first_citations(index, "reboot host")[0] == "corpus/ops/restart.md#0"
        # Both tiers agree on the quorum note, so it leads the fusion.
        assert first_citations(index, "zephyr quorum")[0] == "corpus/ops/quorum.md#0"
        assert first_citations(index, "three voters")[0] == "corpus/ops/quorum.md#0"
        assert index.degraded_searches == 0
    finally:
        index.close()
