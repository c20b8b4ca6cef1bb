"""The knowledge explorer over a real index built in a temporary directory by the real indexer:
sources and their state, search hits, a hit read in context, the match view, the degraded tier,
a missing index, and the keys that open it."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from rich.console import Console
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from fisk_ai.cli.main import main
from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.knowledge.store import connect
from fisk_ai.screens.help import help_text
from fisk_ai.screens.knowledge import NOT_ENABLED, ChunkReader, KnowledgeExplorer
from fisk_ai.tools.builtin.knowledge import knowledge_source
from fisk_ai.tools.toolset import ToolSet
from fisk_ai.tui.widgets.knowledge_context import ChunkBlock
from fisk_ai.tui.widgets.knowledge_results import ResultList
from fisk_ai.workstation.knowledge_app import KnowledgeApp
from tests.fakes.provider import ScriptedProvider, answer
from tests.knowledge.conftest import index, write_corpus
from tests.knowledge.fake_embeddings import CORPUS as HYBRID_CORPUS
from tests.knowledge.fake_embeddings import FakeEmbeddings, build, settings
from tests.tui.explorer_corpus import CORPUS, STORE
from tests.tui.workstation import build_app
from tests.tui.workstation_driver import settle

SMALL = (80, 24)
EXAMPLE_CORPUS = Path(__file__).resolve().parents[2] / "examples" / "knowledge" / "corpus"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The corpus indexed into knowledge/ops, the working directory set to the project, as
    `fisk knowledge index` would leave it."""
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, CORPUS)
    index(STORE, Path("docs"))
    return tmp_path


@asynccontextmanager
async def exploring(
    knowledge: KnowledgeIndex, size: tuple[int, int] = SMALL
) -> AsyncIterator[tuple[KnowledgeApp, Pilot[None]]]:
    app = KnowledgeApp(knowledge)
    try:
        async with app.run_test(size=size) as pilot:
            await until_read(pilot)
            yield app, pilot
    finally:
        knowledge.close()


async def until_read(pilot: Pilot[None]) -> None:
    """Wait until every read the explorer started has been shown."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def ask(pilot: Pilot[None], query: str) -> None:
    await pilot.press(*query, "enter")
    await until_read(pilot)


def explorer(app: KnowledgeApp) -> KnowledgeExplorer:
    screen = app.screen
    assert isinstance(screen, KnowledgeExplorer)
    return screen


def shown(app: KnowledgeApp, selector: str) -> str:
    return plain(app.screen.query_one(selector, Static).render())


def plain(renderable: object) -> str:
    console = Console(width=200, color_system=None)
    with console.capture() as captured:
        console.print(renderable)
    return "\n".join(line.rstrip() for line in captured.get().splitlines())


def styled(renderable: object) -> str:
    """What a terminal is sent for ``renderable``, escape sequences included."""
    console = Console(width=200, color_system="standard", force_terminal=True)
    with console.capture() as captured:
        console.print(renderable)
    return captured.get()


def options(app: KnowledgeApp, selector: str) -> list[str]:
    listing = app.screen.query_one(selector, OptionList)
    return [plain(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


async def test_the_sources_show_their_chunk_counts_and_the_index_state(project: Path) -> None:
    async with exploring(KnowledgeIndex(STORE)) as (app, _):
        assert options(app, "#kx-sources") == [
            "   2 install.md",
            "   3 ops.md",
            "   2 retention.md",
        ]
        assert app.screen.query_one("#kx-sources").border_title == "sources in docs/"
        assert (
            shown(app, "#kx-header").strip()
            == "knowledge  knowledge/ops  built  3 documents, 7 chunks"
        )
        assert shown(app, "#kx-tier").strip() == "tier: lexical (FTS5) - no embeddings configured"


async def test_a_search_shows_each_hits_tier_score_citation_and_matched_words(
    project: Path,
) -> None:
    async with exploring(KnowledgeIndex(STORE)) as (app, pilot):
        await ask(pilot, "logs")

        hits = options(app, "#kx-results")
        assert [hit.splitlines()[0].split("  ")[0] for hit in hits] == [
            "1. docs/retention.md#0",
            "2. docs/ops.md#1",
        ]
        first = hits[0].splitlines()
        assert first[0].startswith("1. docs/retention.md#0  lexical  score ")
        assert first[1:] == ["   Retention", "   Logs are kept thirty days."]
        assert shown(app, "#kx-status").startswith("2 hits for: logs")
        # The matched word is drawn highlighted (bold, reversed), and only it.
        drawn = styled(app.screen.query_one(ResultList).get_option_at_index(0).prompt)
        assert "\x1b[1;7mLogs\x1b[0m are kept" in drawn
        assert drawn.count("\x1b[1;7m") == 1


async def test_enter_on_a_hit_reads_it_among_its_neighbours_and_esc_comes_back(
    project: Path,
) -> None:
    async with exploring(KnowledgeIndex(STORE)) as (app, pilot):
        await ask(pilot, "disk")
        await pilot.press("tab", "enter")
        await until_read(pilot)

        reader = app.screen
        assert isinstance(reader, ChunkReader)
        blocks = list(reader.query(ChunkBlock))
        assert [plain(block.render()).splitlines()[0] for block in blocks] == [
            "docs/ops.md#0  Operations",
            "docs/ops.md#1  Operations > Disks  > opened",
            "docs/ops.md#2  Operations > Calendar",
        ]
        assert [block.has_class("-opened") for block in blocks] == [False, True, False]
        assert shown(app, "#kr-header").strip() == "docs/ops.md#1  chunk 2 of 3"

        await pilot.press("right_square_bracket")
        await until_read(pilot)
        assert shown(app, "#kr-header").strip() == "docs/ops.md#2  chunk 3 of 3"

        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, KnowledgeExplorer)
        assert options(app, "#kx-results")[0].startswith("1. docs/ops.md#1")


async def test_enter_on_a_source_reads_the_document_from_its_first_chunk(project: Path) -> None:
    async with exploring(KnowledgeIndex(STORE)) as (app, pilot):
        app.screen.query_one("#kx-sources").focus()
        await pilot.press("down", "enter")
        await until_read(pilot)

        assert isinstance(app.screen, ChunkReader)
        assert shown(app, "#kr-header") == "docs/ops.md#0  chunk 1 of 3"
        assert [block.has_class("-opened") for block in app.screen.query(ChunkBlock)] == [
            True,
            False,
            False,
        ]


async def test_the_match_view_lists_the_documents_holding_every_word_with_term_counts(
    project: Path,
) -> None:
    async with exploring(KnowledgeIndex(STORE)) as (app, pilot):
        await pilot.press("ctrl+t")
        await ask(pilot, "logs evening")

        # The two words are in two different chunks of docs/ops.md.
        assert options(app, "#kx-results") == [
            "docs/ops.md\n   2 body and 0 heading chunks match, of 3",
        ]
        assert shown(app, "#kx-terms").splitlines() == [
            "logs: 2 documents, 2 as written",
            "evening: 1 documents, 1 as written",
        ]
        assert shown(app, "#kx-tier").strip() == (
            "tier: lexical (FTS5) - matching is complete, never ranked"
        )
        assert shown(app, "#kx-status").strip() == "1 of 3 documents hold: logs evening"
        assert explorer(app).query_one("#kx-query").border_title == "match"


async def test_ctrl_t_asks_the_other_view_the_same_words_or_new_ones(project: Path) -> None:
    async with exploring(KnowledgeIndex(STORE)) as (app, pilot):
        await ask(pilot, "logs")
        await pilot.press("ctrl+t", "enter")
        await until_read(pilot)
        assert shown(app, "#kx-status") == "2 of 3 documents hold: logs"

        await pilot.press("ctrl+t")
        await ask(pilot, "apt")
        assert shown(app, "#kx-status").startswith("1 hit for: apt")


async def test_an_operator_in_the_match_view_is_refused_in_a_sentence(project: Path) -> None:
    async with exploring(KnowledgeIndex(STORE)) as (app, pilot):
        await pilot.press("ctrl+t")
        await ask(pilot, "logs OR disk")
        assert shown(app, "#kx-status").startswith('"OR" is not an operator')
        assert options(app, "#kx-results") == []


async def test_an_unreachable_embeddings_endpoint_is_said_plainly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, HYBRID_CORPUS)
    fake = FakeEmbeddings()
    build(STORE, Path("ops"), settings(fake.url))
    fake.stop()

    async with exploring(KnowledgeIndex(STORE, settings(fake.url))) as (app, pilot):
        await ask(pilot, "restart")

        tier = app.screen.query_one("#kx-tier", Static)
        assert tier.has_class("-degraded")
        assert plain(tier.render()).splitlines() == [
            "embeddings unreachable (connect failed): these hits come from the lexical tier only",
            "tier: hybrid -> DEGRADED to lexical (embeddings unreachable: connect failed)",
        ]
        assert options(app, "#kx-results")[0].startswith("1. ops/restart.md#0  degraded  score ")


async def test_a_hybrid_search_says_its_tier_on_each_hit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, HYBRID_CORPUS)
    fake = FakeEmbeddings()
    try:
        build(STORE, Path("ops"), settings(fake.url))
        async with exploring(KnowledgeIndex(STORE, settings(fake.url))) as (app, pilot):
            await ask(pilot, "bounce machine")
            hits = options(app, "#kx-results")
    finally:
        fake.stop()
    assert hits[0].startswith("1. ops/restart.md#0  hybrid  rrf ")


async def test_a_missing_index_names_the_command_that_builds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with exploring(KnowledgeIndex(STORE)) as (app, pilot):
        assert shown(app, "#kx-problem").strip() == (
            "no knowledge index is built at knowledge/ops; build it with fisk knowledge index"
        )
        assert "not built" in shown(app, "#kx-header")
        assert options(app, "#kx-sources") == []
        # Built while the explorer is open, it is seen on F5.
        write_corpus(tmp_path, CORPUS)
        index(STORE, Path("docs"))
        await pilot.press("f5")
        await until_read(pilot)
        assert "built  3 documents, 7 chunks" in shown(app, "#kx-header")
        assert not app.screen.query_one("#kx-problem").has_class("-shown")


async def test_a_file_changed_since_indexing_marks_its_source_and_the_index_stale(
    project: Path,
) -> None:
    (project / "docs" / "install.md").write_text("# Install\n\nUse brew.\n")
    (project / "docs" / "retention.md").unlink()
    async with exploring(KnowledgeIndex(STORE)) as (app, _):
        assert options(app, "#kx-sources") == [
            "   2 install.md\n     changed since indexed",
            "   3 ops.md",
            "   2 retention.md\n     gone",
        ]
        assert "stale  3 documents, 7 chunks" in shown(app, "#kx-header")
        assert shown(app, "#kx-problem").strip() == (
            "2 of 3 documents changed since they were indexed; fisk knowledge index brings them in"
        )


async def test_a_database_of_another_format_is_named_with_its_rebuild_command(
    project: Path,
) -> None:
    writer = connect(str(STORE / "knowledge.db"))
    writer.execute("UPDATE rag_meta SET value = '1' WHERE key = 'format_version'")
    writer.close()
    async with exploring(KnowledgeIndex(STORE)) as (app, _):
        assert "format mismatch" in shown(app, "#kx-header")
        assert "fisk knowledge index --reindex" in shown(app, "#kx-problem")


async def test_the_explorer_never_holds_up_a_writer(project: Path) -> None:
    async with exploring(KnowledgeIndex(STORE)) as (app, pilot):
        await ask(pilot, "logs")
        # The explorer holds its read-only connection open; the writer's lock is free.
        (project / "docs" / "new.md").write_text("# New\n\nFresh logs arrive hourly.\n")
        assert index(STORE, Path("docs")).added == 1
        await pilot.press("f5")
        await until_read(pilot)
        assert "   1 new.md" in options(app, "#kx-sources")
        assert "built  4 documents, 8 chunks" in shown(app, "#kx-header")


async def test_the_docs_walkthroughs_explorer_finds_the_passage_the_answer_cites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/knowledge.md: browse the example's index and search for the model's query."""
    shutil.copytree(EXAMPLE_CORPUS, tmp_path / "examples" / "knowledge" / "corpus")
    monkeypatch.chdir(tmp_path)
    index(Path("knowledge/docs"), Path("examples/knowledge/corpus"))

    async with exploring(KnowledgeIndex(Path("knowledge/docs")), size=(100, 30)) as (app, pilot):
        sources = app.screen.query_one("#kx-sources", OptionList)
        assert sources.border_title == "sources in examples/knowledge/corpus/"
        assert options(app, "#kx-sources") == [
            "  20 knowledge.md",
            "  11 memory.md",
            "  30 sessions.md",
        ]
        await ask(pilot, "memory key letters digits slashes")
        first = options(app, "#kx-results")[0].splitlines()[0]
        assert first == "1. examples/knowledge/corpus/memory.md#1  lexical  score 11.31"
        await pilot.press("tab", "enter")
        await until_read(pilot)
        assert [
            plain(block.render()).splitlines()[0].split("  ")[0]
            for block in app.screen.query(ChunkBlock)
        ] == [f"examples/knowledge/corpus/memory.md#{ordinal}" for ordinal in range(4)]


async def test_f4_in_the_run_opens_the_explorer_on_the_runs_index(project: Path) -> None:
    app, agent = build_app(project, ScriptedProvider([answer("fine")]))
    knowledge = KnowledgeIndex(STORE)
    tools = ToolSet(
        [*agent.tools.sources, knowledge_source(knowledge, top_k=5, max_injected_tokens=6000)]
    )
    app.bridge.bind(agent.conversation, store=agent.store, tools=tools)
    try:
        async with app.run_test(size=SMALL) as pilot:
            await settle(app, pilot)
            await pilot.press("f4")
            await until_read(pilot)
            assert isinstance(app.screen, KnowledgeExplorer)
            assert app.screen.index is knowledge
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen_stack[-1] is app.run_screen
    finally:
        await agent.close()
        knowledge.close()


async def test_f4_without_knowledge_says_how_to_turn_it_on(project: Path) -> None:
    app, agent = build_app(project, ScriptedProvider([answer("fine")]))
    posted: list[Message] = []
    try:
        async with app.run_test(size=SMALL, message_hook=posted.append) as pilot:
            await settle(app, pilot)
            await pilot.press("f4")
            await pilot.pause()
            assert app.screen is app.run_screen
    finally:
        await agent.close()
    notices = [message.notification.message for message in posted if isinstance(message, Notify)]
    assert notices == [NOT_ENABLED]


def test_the_help_names_the_explorer_key() -> None:
    assert "F4" in help_text() and "knowledge" in help_text()


def test_browse_off_a_terminal_says_so_in_one_sentence(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "browse"]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "fisk: error: fisk knowledge browse needs a terminal on stdin and stdout; use fisk "
        "knowledge search, match or sources to read the index as lines"
    ]


def test_browse_on_a_terminal_runs_the_explorer_on_the_configured_index(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "agent.yaml").write_text(
        "identity: ops\nsystem_prompt: hi\n"
        "harness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n"
    )
    opened: list[KnowledgeApp] = []
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setattr(KnowledgeApp, "run", lambda self, *a, **k: opened.append(self))
    assert main(["knowledge", "browse", "--top-k", "3"]) == 0
    assert [(app.index.directory, app.top_k) for app in opened] == [(STORE, 3)]


def test_browse_refuses_a_top_k_out_of_range(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert main(["knowledge", "browse", "--top-k", "30"]) == 1
    assert "--top-k must be between 1 and 20, not 30" in capsys.readouterr().err


@pytest.fixture(autouse=True)
def _no_store_dir_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("FISK_AI_STORE_DIR", raising=False)
    yield


def test_the_reader_reflows_prose_and_keeps_lists_code_and_highlights() -> None:
    from fisk_ai.tui.widgets.knowledge_context import reflowed

    body = (
        "A journal that cannot be read\nis still listed.\n\n"
        "- drops a line cut short\n  by a crash\n- refuses damage\n\n"
        "```\nfisk session ls\nfisk session rm ID\n```\n"
    )
    flowing, moved = reflowed(body)
    # Prose wraps at the reader's width, not the source's; lists and code keep their lines.
    assert flowing == (
        "A journal that cannot be read is still listed.\n\n"
        "- drops a line cut short by a crash\n- refuses damage\n\n"
        "```\nfisk session ls\nfisk session rm ID\n```\n"
    )
    # A match found in the stored text still lands on its word.
    for word in ("listed", "crash", "rm"):
        start = body.index(word)
        assert flowing[moved[start] : moved[start + len(word)]] == word
