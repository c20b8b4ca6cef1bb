"""A damaged knowledge.db (cut short, garbage pages, not a database at all) gives one sentence
naming `fisk knowledge index --reindex`, never a traceback, and the doctor runs
`PRAGMA integrity_check` so garbage pages are reported, not passed (issue 25, item 7)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.cli.main import main
from fisk_ai.knowledge.doctor import CheckState, diagnose
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.knowledge.conftest import index, write_corpus

PAGE = 4096
AGENT_YAML = (
    "identity: ops\nsystem_prompt: hi\n"
    "harness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n"
)


def _garbage_pages(data: bytearray) -> bytearray:
    # Pages near the end hold chunk rows and index entries, not the schema, so the database
    # still opens and only reading those pages (or checking them) meets the damage.
    noise = random.Random(7)
    pages = len(data) // PAGE
    for page in range(pages - 8, pages - 2):
        data[page * PAGE : (page + 1) * PAGE] = noise.randbytes(PAGE)
    return data


DAMAGE: dict[str, Callable[[bytearray], bytearray]] = {
    "truncated": lambda data: data[: len(data) // 3],
    "garbage-pages": _garbage_pages,
    "not-a-database": lambda data: bytearray(b"x" * 100) + data[100:],
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISK_AI_STORE_DIR", raising=False)
    (tmp_path / "agent.yaml").write_text(AGENT_YAML)
    words = "words about apt and retention and rollback " * 120
    write_corpus(tmp_path / "docs", {f"n{i}.md": f"# Note {i}\n\n{words}\n" for i in range(40)})
    index(tmp_path / "knowledge" / "ops", Path("docs"))
    return tmp_path


def _damage(project: Path, kind: str) -> Path:
    database = project / "knowledge" / "ops" / "knowledge.db"
    database.write_bytes(bytes(DAMAGE[kind](bytearray(database.read_bytes()))))
    return database


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_the_doctor_fails_a_damaged_database_naming_reindex(project: Path, kind: str) -> None:
    _damage(project, kind)
    checks = diagnose(project / "knowledge" / "ops", ["docs"], embeddings=None)
    failed = [check for check in checks if check.state is CheckState.FAILED]
    assert [check.name for check in failed] == ["Database integrity"]
    assert failed[0].fatal
    assert "fisk knowledge index --reindex" in failed[0].detail
    assert "\n" not in failed[0].detail


def test_the_doctor_reports_the_garbage_pages_integrity_check_found(project: Path) -> None:
    _damage(project, "garbage-pages")
    checks = diagnose(project / "knowledge" / "ops", ["docs"], embeddings=None)
    [integrity] = [check for check in checks if check.name == "Database integrity"]
    assert "page" in integrity.detail


def test_the_doctor_passes_integrity_on_a_whole_database(project: Path) -> None:
    checks = diagnose(project / "knowledge" / "ops", ["docs"], embeddings=None)
    [integrity] = [check for check in checks if check.name == "Database integrity"]
    assert integrity.state is CheckState.PASSED


def test_the_doctor_command_exits_1_on_garbage_pages(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _damage(project, "garbage-pages")
    assert main(["knowledge", "doctor"]) == 1
    assert "FAIL  Database integrity" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["search", "apt"], ["stats"]], ids=["search", "stats"])
@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_database_is_one_sentence_naming_reindex(
    project: Path, kind: str, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    _damage(project, kind)
    assert main(["knowledge", *command]) == 1
    err = capsys.readouterr().err
    assert "fisk knowledge index --reindex" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_reindex_builds_a_damaged_database_again(
    project: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _damage(project, kind)
    assert main(["knowledge", "index", "--reindex"]) == 0
    capsys.readouterr()
    assert main(["knowledge", "search", "rollback"]) == 0
    assert "docs/n" in capsys.readouterr().out


def _run_searching(project: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[Any]]:
    """``fisk run --no-tui`` in ``project``, the model asking knowledge_search once."""
    with (project / "agent.yaml").open("a") as config:
        config.write("llm:\n  model: claude-test-1\n")
    turns = [
        reply(tool_use("tu_1", "knowledge_search", {"query": "apt"}), stop_reason="tool_use"),
        reply(text("searched")),
    ]
    with FakeMessagesAPI(turns) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fake-damage")
        code = main(["run", "--no-tui", "--state-dir", str(project / "state"), "look it up"])
        return code, list(api.requests)


@pytest.mark.parametrize("kind", ["truncated", "not-a-database"])
def test_a_run_over_a_database_that_will_not_open_stops_in_one_sentence(
    project: Path, kind: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _damage(project, kind)
    code, requests = _run_searching(project, monkeypatch)
    err = capsys.readouterr().err
    assert code == 1
    assert not requests
    assert "fisk knowledge index --reindex" in err
    assert err.count("\n") == 1


def test_a_search_that_meets_garbage_pages_tells_the_model_what_to_rebuild(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _damage(project, "garbage-pages")
    code, requests = _run_searching(project, monkeypatch)
    assert code == 0
    assert "Traceback" not in capsys.readouterr().err
    assert "fisk knowledge index --reindex" in str(requests[1]["messages"][-1])
