"""Fixtures for the workstation tests; snapshot baselines of this area live in ``snapshots/``."""

from __future__ import annotations

from pathlib import Path

import pytest_textual_snapshot  # type: ignore[import-untyped]
from syrupy.location import PyTestLocation

REPO_ROOT = Path(__file__).resolve().parents[2]
TESTS_HERE = Path(__file__).resolve().parent
SNAPSHOT_ROOT = REPO_ROOT / "snapshots"

_plugin_dirname = pytest_textual_snapshot.SVGImageExtension.dirname


def _snapshot_dirname(cls: type, *, test_location: PyTestLocation) -> str:
    # syrupy keeps baselines beside each test file; this area keeps them in the top-level
    # snapshots/ directory, one folder per test module.
    if Path(test_location.filepath).resolve().is_relative_to(TESTS_HERE):
        return str(SNAPSHOT_ROOT / Path(test_location.filepath).stem)
    return str(_plugin_dirname(test_location=test_location))


pytest_textual_snapshot.SVGImageExtension.dirname = classmethod(_snapshot_dirname)
