"""The commands that need an index, run where none was ever built: the doctor fails, and rebuild,
reset and rm create nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.cli.main import main


def test_doctor_exits_1_when_the_store_is_missing(
    cli_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "doctor"]) == 1
    assert "FAIL  Store present" in capsys.readouterr().out


def test_rebuild_of_a_store_never_built_is_refused_and_creates_nothing(
    cli_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "rebuild"]) == 1

    assert "there is no knowledge index to rebuild" in capsys.readouterr().err
    assert not (cli_project / "knowledge").exists()


def test_reset_of_a_store_never_built_creates_nothing(
    cli_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "reset", "--force"]) == 0

    assert "there is no knowledge index to reset" in capsys.readouterr().out
    assert not (cli_project / "knowledge").exists()


def test_rm_of_a_store_never_built_is_refused_and_creates_nothing(
    cli_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "rm", "docs/draft.md"]) == 1

    assert "there is no knowledge index to remove documents from" in capsys.readouterr().err
    assert not (cli_project / "knowledge").exists()
