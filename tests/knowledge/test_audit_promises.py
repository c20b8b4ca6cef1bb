"""The knowledge rows of the spec audit, each as the operator or the model meets it: results free
of control bytes, a degrade reason from a closed vocabulary, the watch and match flags, a
leading-dash word read as a word, the doctor's exit code, rebuild and reset on a store never
built, --top-k 0, scores printed as they rank, and --config after the action."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fisk_ai import config
from fisk_ai.cli.main import main
from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.knowledge.embeddings import DegradeReason
from fisk_ai.knowledge.query import search_query
from fisk_ai.knowledge.search import Hit, SearchAnswer, SearchStatus, Source
from fisk_ai.knowledge.store import KnowledgeReader, KnowledgeWriter, stored_documents
from fisk_ai.knowledge.watch import MIN_DEBOUNCE, Watcher
from fisk_ai.lineui.knowledge import search_lines, source_lines
from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.builtin.knowledge import KnowledgeSearch
from tests.knowledge.conftest import index, write_corpus
from tests.patience import DEADLINE

AGENT_YAML = (
    "identity: ops\nsystem_prompt: hi\n"
    "harness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n"
)
CORPUS = {
    "retention.md": "# Retention\n\nLogs are kept thirty days.\n",
    "draft.md": "# Draft\n\nretention draft, kept for now\n",
    "policy.md": "# Policy\n\nretention appears in the body here.\n\n# More\n\nretention again.\n",
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISK_AI_STORE_DIR", raising=False)
    (tmp_path / "agent.yaml").write_text(AGENT_YAML)
    write_corpus(tmp_path / "docs", CORPUS)
    return tmp_path


@pytest.fixture
def built(project: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["knowledge", "index"]) == 0
    capsys.readouterr()
    return project


async def test_knowledge_search_results_carry_no_control_bytes(store: Path, tmp_path: Path) -> None:
    hostile = "# Esc\x1b[2J\n\nescapeword \x1b]0;title\x07 clears and \x01\x02 controls\n"
    index(store, write_corpus(tmp_path / "docs", {"hostile.md": hostile}))
    tool = KnowledgeSearch(KnowledgeIndex(store), top_k=5, max_injected_tokens=6000)

    outcome = await tool.execute('{"query": "escapeword"}', ExecDeps())

    [result] = json.loads(outcome.output)["results"]
    assert "escapeword" in result["content"]
    for text in (result["content"], result["section"], result["citation"]):
        assert not any(ord(character) < 0x20 and character not in "\n\t" for character in text)


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
    write_corpus(tmp_path / "docs", CORPUS)
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


def test_watch_without_the_initial_pass_indexes_only_later_changes(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs", {"before.md": "# Before\n\nalpha\n"})
    store = tmp_path / "store"
    stop = threading.Event()
    indexed = threading.Event()
    with KnowledgeWriter(store) as writer:
        watcher = Watcher(
            writer, [str(docs)], reconcile=True, debounce=MIN_DEBOUNCE, initial_pass=False
        )
        thread = threading.Thread(target=watcher.run, args=(lambda _r: indexed.set(), stop))
        thread.start()
        try:
            assert watcher.watching.wait(DEADLINE), "the watch never started"
            (docs / "after.md").write_text("# After\n\nbeta\n")
            assert indexed.wait(DEADLINE), "the change was never indexed"
        finally:
            stop.set()
            thread.join(10)
        paths = sorted(Path(path).name for path in writer.documents())

    assert paths == ["after.md"]


def test_a_debounce_under_100ms_is_refused(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["knowledge", "watch", "--debounce", "50ms"]) == 1
    assert "--debounce must be at least 100ms" in capsys.readouterr().err


def test_match_reads_a_leading_dash_word_as_an_exclusion(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "match", "retention", "-draft", "--paths-only"]) == 0
    assert capsys.readouterr().out.split() == ["docs/policy.md", "docs/retention.md"]

    assert main(["knowledge", "match", "retention", "--limit", "5", "-draft", "--paths-only"]) == 0
    assert capsys.readouterr().out.split() == ["docs/policy.md", "docs/retention.md"]


def test_match_min_matches_keeps_documents_matching_that_often_in_the_body(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "match", "retention", "--min-matches", "2", "--paths-only"]) == 0

    assert capsys.readouterr().out.split() == ["docs/policy.md"]


def test_match_explain_prints_the_compiled_expression_and_each_term(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "match", "retention", "-draft", "--explain"]) == 0

    out = capsys.readouterr().out
    assert 'compiled: "retention" AND -"draft"' in out
    assert "WORD       AS WRITTEN  ANY FORM" in out


def test_match_lists_citations_of_the_first_matching_chunk(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "match", "again"]) == 0

    assert "docs/policy.md#1" in capsys.readouterr().out


def test_doctor_exits_1_when_the_store_is_missing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "doctor"]) == 1
    assert "FAIL  Store present" in capsys.readouterr().out


def test_rebuild_of_a_store_never_built_is_refused_and_creates_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "rebuild"]) == 1

    assert "there is no knowledge index to rebuild" in capsys.readouterr().err
    assert not (project / "knowledge").exists()


def test_reset_of_a_store_never_built_creates_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "reset", "--force"]) == 0

    assert "there is no knowledge index to reset" in capsys.readouterr().out
    assert not (project / "knowledge").exists()


def test_top_k_zero_is_refused(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["knowledge", "search", "--top-k", "0", "retention"]) == 1
    assert "--top-k must be between 1 and 20, not 0" in capsys.readouterr().err


def test_scores_are_printed_higher_is_better_in_both_tiers() -> None:
    query = search_query("retention")
    lexical = SearchAnswer(SearchStatus.OK, (Hit("a.md", 0, "", "x", -2.5),), query)
    fused = SearchAnswer(SearchStatus.OK, (Hit("a.md", 0, "", "x", 0.0325),), query, fused=True)

    assert "score 2.50" in search_lines(lexical, full=False)
    assert "rrf 0.0325" in search_lines(fused, full=False)


def test_index_takes_config_after_the_action(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "agent.yaml").rename(project / "other.yaml")

    assert main(["knowledge", "index", "--config", "other.yaml"]) == 0
    assert capsys.readouterr().out.startswith("indexed: added=3")


def test_documents_record_mtime_in_seconds(built: Path) -> None:
    reader = KnowledgeReader(built / "knowledge" / "ops")
    assert reader.open()
    with reader.use() as connection:
        stored = stored_documents(connection)
    reader.close()

    for path, document in stored.items():
        assert document.mtime == Path(path).stat().st_mtime_ns // 1_000_000_000


def test_rm_of_a_store_never_built_is_refused_and_creates_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "rm", "docs/draft.md"]) == 1

    assert "there is no knowledge index to remove documents from" in capsys.readouterr().err
    assert not (project / "knowledge").exists()


async def test_a_search_of_documents_without_passages_does_not_claim_no_documents(
    store: Path, tmp_path: Path
) -> None:
    index(store, write_corpus(tmp_path / "docs", {"title.md": "# Only a title\n"}))
    tool = KnowledgeSearch(KnowledgeIndex(store), top_k=5, max_injected_tokens=6000)

    result = json.loads((await tool.execute('{"query": "title"}', ExecDeps())).output)

    assert result["status"] == "index_empty"
    assert "no passages" in result["note"] and "no documents" not in result["note"]


def test_sources_lists_an_index_written_with_nanosecond_mtimes() -> None:
    older = Source("docs/a.md", "A", 1, 1_767_225_600 * 1_000_000_000)
    newer = Source("docs/a.md", "A", 1, 1_767_225_600)

    assert source_lines([older]) == source_lines([newer])
