"""The knowledge explorer drawn at 80x24 and 160x45, over a real index built in a temporary
directory; the working directory is the project, so the store reads as knowledge/ops."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.workstation.knowledge_app import KnowledgeApp
from tests.knowledge.conftest import index, write_corpus
from tests.knowledge.fake_embeddings import CORPUS as HYBRID_CORPUS
from tests.knowledge.fake_embeddings import FakeEmbeddings, build, settings
from tests.tui.explorer_corpus import CORPUS, STORE
from tests.tui.settle import SteadyCursors, pinned, settled

SMALL = (80, 24)
LARGE = (160, 45)
SnapCompare = Callable[..., bool]
Script = Callable[[Pilot[None]], Awaitable[None]]
KEY_NAMES = frozenset({"enter", "tab", "escape", "ctrl+t"})


class SteadyKnowledgeApp(SteadyCursors, KnowledgeApp):
    """The explorer with a query field whose cursor does not blink."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, CORPUS)
    index(STORE, Path("docs"))
    return tmp_path


@pytest.fixture
def knowledge() -> Iterator[KnowledgeIndex]:
    opened = KnowledgeIndex(STORE)
    yield opened
    opened.close()


def typing(*keys: str) -> Script:
    """Wait for the explorer's first read, press ``keys`` (a query is typed letter by letter),
    and wait for what they asked to be shown."""

    async def script(pilot: Pilot[None]) -> None:
        await settled(pilot)
        for key in keys:
            await pilot.press(*([key] if key in KEY_NAMES else key))
            await settled(pilot)

    return script


@pytest.mark.usefixtures("project")
@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x45"])
def test_search_hits(
    snap_compare: SnapCompare, knowledge: KnowledgeIndex, size: tuple[int, int]
) -> None:
    """The sources with their chunk counts, and two hits for "logs", each with its tier,
    score, citation, section and passage, the matched word highlighted."""
    app = pinned(SteadyKnowledgeApp(knowledge))
    assert snap_compare(app, terminal_size=size, run_before=typing("logs", "enter"))


@pytest.mark.usefixtures("project")
@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x45"])
def test_a_hit_read_in_context(
    snap_compare: SnapCompare, knowledge: KnowledgeIndex, size: tuple[int, int]
) -> None:
    """docs/ops.md#1 opened from a search for "disk": its neighbours above and below, the
    opened chunk marked with a bar, "disk" highlighted; the footer names Esc, [ and ]."""
    app = pinned(SteadyKnowledgeApp(knowledge))
    script = typing("disk", "enter", "tab", "enter")
    assert snap_compare(app, terminal_size=size, run_before=script)


@pytest.mark.usefixtures("project")
@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x45"])
def test_the_match_view(
    snap_compare: SnapCompare, knowledge: KnowledgeIndex, size: tuple[int, int]
) -> None:
    """ctrl+t, then "logs evening": the enumerate tier line, each term's document counts, and
    the one document holding both words (in two different chunks)."""
    app = pinned(SteadyKnowledgeApp(knowledge))
    script = typing("ctrl+t", "logs evening", "enter")
    assert snap_compare(app, terminal_size=size, run_before=script)


def test_a_missing_index(
    snap_compare: SnapCompare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No database: the header says not built and the line under it names the command."""
    monkeypatch.chdir(tmp_path)
    knowledge = KnowledgeIndex(STORE)
    try:
        assert snap_compare(
            pinned(SteadyKnowledgeApp(knowledge)), terminal_size=SMALL, run_before=typing()
        )
    finally:
        knowledge.close()


def test_the_degraded_tier(
    snap_compare: SnapCompare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index built with embeddings whose endpoint has gone: the search answers from the
    lexical tier, the warning says so in words, and each hit is marked degraded."""
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, HYBRID_CORPUS)
    fake = FakeEmbeddings()
    build(STORE, Path("ops"), settings(fake.url))
    fake.stop()
    knowledge = KnowledgeIndex(STORE, settings(fake.url))
    try:
        app = pinned(SteadyKnowledgeApp(knowledge))
        assert snap_compare(app, terminal_size=SMALL, run_before=typing("restart", "enter"))
    finally:
        knowledge.close()
