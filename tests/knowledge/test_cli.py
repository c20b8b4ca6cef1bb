"""`fisk knowledge`: the subcommands through main(), as an operator types them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fisk_ai.cli.main import main
from tests.knowledge.conftest import write_corpus

AGENT_YAML = (
    "identity: ops\nsystem_prompt: hi\n"
    "harness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISK_AI_STORE_DIR", raising=False)
    (tmp_path / "agent.yaml").write_text(AGENT_YAML)
    write_corpus(
        tmp_path / "docs",
        {
            "install.md": "# Install\n\nRun make install.\n\n## Linux\n\nUse apt.\n",
            "retention.md": "# Retention\n\nLogs are kept thirty days.\n",
        },
    )
    return tmp_path


def test_index_then_search_then_show(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["knowledge", "index"]) == 0
    assert capsys.readouterr().out == (
        "indexed: added=2 updated=0 skipped=0 removed=0 (2 files, 3 chunks)\n"
    )

    assert main(["k", "search", "apt"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. docs/install.md#1")
    assert "[Install > Linux]" in out and "Use apt." in out

    assert main(["rag", "show", "docs/install.md#1"]) == 0
    assert capsys.readouterr().out == (
        "docs/install.md#1 (chunk 2 of 2)\nSection: Install > Linux\n\nUse apt.\n"
    )
    assert (project / "knowledge" / "ops" / "knowledge.db").is_file()


def test_index_reconciles_and_dry_run_writes_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["knowledge", "index"])
    (project / "docs" / "retention.md").unlink()
    capsys.readouterr()

    assert main(["knowledge", "index", "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith("would index: added=0 updated=0 skipped=1 removed=1")
    assert main(["knowledge", "index"]) == 0
    assert "removed=1" in capsys.readouterr().out
    assert main(["knowledge", "sources"]) == 0
    assert "docs/retention.md" not in capsys.readouterr().out


def test_match_exit_code_is_opt_in(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["knowledge", "index"])

    assert main(["knowledge", "match", "nowhere"]) == 0
    assert main(["knowledge", "match", "nowhere", "--exit-code"]) == 1
    assert main(["knowledge", "match", "logs", "days", "--paths-only", "--exit-code"]) == 0
    assert capsys.readouterr().out.endswith("docs/retention.md\n")


def test_unbuilt_index_is_an_error_not_an_empty_answer(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "search", "apt"]) == 1
    assert "no knowledge index is built" in capsys.readouterr().err


def test_reset_needs_force_and_rm_removes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["knowledge", "index"])

    assert main(["knowledge", "reset"]) == 1
    assert "--force" in capsys.readouterr().err
    assert main(["knowledge", "rm", "docs/install.md"]) == 0
    assert capsys.readouterr().out == "removed 1 documents\n"
    assert main(["knowledge", "rm", "docs/nothing.md"]) == 1
    assert main(["knowledge", "reset", "--force"]) == 0
    main(["knowledge", "stats"])
    assert "Documents: 0" in capsys.readouterr().out


def test_doctor_reports_each_check(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # No store yet: "Store present" fails, and so does the command.
    assert main(["knowledge", "doctor"]) == 1
    before = capsys.readouterr().out
    assert "skip  Format: no index is built" in before
    main(["knowledge", "index"])
    capsys.readouterr()

    assert main(["knowledge", "doctor"]) == 0
    after = capsys.readouterr().out
    assert "ok    Index integrity" in after and "ok    Index path docs: found" in after


def test_knowledge_must_be_enabled(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "agent.yaml").write_text("identity: ops\nsystem_prompt: hi\n")

    assert main(["knowledge", "index"]) == 1
    assert "harness.knowledge.enabled: true" in capsys.readouterr().err


def test_an_unreachable_endpoint_fails_the_index_naming_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "agent.yaml").write_text(
        AGENT_YAML + "    embeddings:\n      base_url: http://127.0.0.1:1\n      model: m\n"
    )

    assert main(["knowledge", "index"]) == 1
    assert "http://127.0.0.1:1 is unreachable: connect failed" in capsys.readouterr().err


def test_store_dir_must_be_absolute_and_moves_the_store(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "--store-dir", "rel", "index"]) == 1
    assert "--store-dir must be an absolute path" in capsys.readouterr().err

    assert main(["knowledge", "--store-dir", str(project / "state"), "index"]) == 0
    assert (project / "state" / "knowledge" / "ops" / "knowledge.db").is_file()


def test_help_does_not_load_sqlite() -> None:
    code = (
        "import sys, contextlib, io\nfrom fisk_ai.cli.main import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--help'])\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['knowledge', '--help'])\n"
        "print('sqlean' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert done.stdout.strip() == "False"
