"""Static checks run inside the test command, so a lint failure fails the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

# One worker runs the linters one after another: both ruff commands write .ruff_cache, and mypy
# over the whole tree is the longest single test, so it starts among the first (xdist hands out
# the largest groups first).
pytestmark = [pytest.mark.lint, pytest.mark.xdist_group("lint")]


def run_tool(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_finds_nothing() -> None:
    result = run_tool("ruff", "check", "fisk_ai", "tests", "examples", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = run_tool("ruff", "format", "--check", "fisk_ai", "tests", "examples", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = run_tool("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_contracts_hold() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
