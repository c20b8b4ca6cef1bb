"""The `fisk knowledge` flags checked before any work: the debounce floor, the --top-k range, and
--config after the action."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.cli.main import main


def test_a_debounce_under_100ms_is_refused(
    indexed_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "watch", "--debounce", "50ms"]) == 1
    assert "--debounce must be at least 100ms" in capsys.readouterr().err


def test_top_k_zero_is_refused(indexed_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["knowledge", "search", "--top-k", "0", "retention"]) == 1
    assert "--top-k must be between 1 and 20, not 0" in capsys.readouterr().err


def test_index_takes_config_after_the_action(
    cli_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (cli_project / "agent.yaml").rename(cli_project / "other.yaml")

    assert main(["knowledge", "index", "--config", "other.yaml"]) == 0
    assert capsys.readouterr().out.startswith("indexed: added=3")
