"""Static checks run inside the test command, so a lint failure fails the suite."""

from __future__ import annotations

import ast
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


def _test_modules_imported(tree: ast.Module) -> list[tuple[int, str]]:
    """The test modules (``tests/.../test_*.py``) an import in ``tree`` names, by line."""
    imported: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        imported += [
            (node.lineno, module)
            for module in modules
            if module.startswith("tests.")
            and module.rpartition(".")[2].startswith("test_")
            and (REPO_ROOT / Path(*module.split("."))).with_suffix(".py").is_file()
        ]
    return imported


def test_no_test_module_imports_from_another_test_module() -> None:
    # A helper two test files share lives in a support module or conftest.py beside them
    # (docs/contributing.md), so running, moving or deleting one test file never breaks another.
    found = [
        f"{path.relative_to(REPO_ROOT)}:{line}: imports {module}"
        for path in sorted((REPO_ROOT / "tests").rglob("*.py"))
        for line, module in _test_modules_imported(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [], "\n".join(found)
