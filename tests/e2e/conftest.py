"""Fixtures for running the installed `fisk` command as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.patience import DEADLINE

FISK = Path(sys.executable).parent / "fisk"
E2E = Path(__file__).resolve().parent

RunFisk = Callable[..., subprocess.CompletedProcess[str]]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test in this folder e2e, so ``-m "not e2e"`` leaves them all out.

    Collection hooks in a conftest see the whole session's items, not only this folder's.
    """
    for item in items:
        if item.path.resolve().is_relative_to(E2E):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def run_fisk(tmp_path: Path) -> RunFisk:
    """Run `fisk ARGS...` from ``tmp_path`` with stdin closed; output captured (a pipe)."""

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        environment = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
        environment.pop("NO_COLOR", None)
        environment.pop("VERBOSE", None)
        environment.update(env or {})
        return subprocess.run(
            [str(FISK), *args],
            cwd=tmp_path,
            env=environment,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )

    return run
