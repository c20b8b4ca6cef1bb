"""Every snapshot baseline belongs to a snapshot test.

syrupy fails a serial run on a baseline no test uses, but under pytest-xdist it skips that check
(it cannot merge the workers' reports), so a renamed test would leave its old baseline behind
unnoticed. This test stands in for it.
"""

import ast
import re

from tests.conftest import REPO_ROOT

SNAPSHOTS = REPO_ROOT / "snapshots"
# tests/tui/conftest.py keeps each module's baselines in snapshots/<module>/.
SNAPSHOT_TESTS = REPO_ROOT / "tests" / "tui"


def snapshot_tests(module: str) -> set[str]:
    """The names of the test functions in ``module`` that take the ``snap_compare`` fixture."""
    source = SNAPSHOT_TESTS / f"{module}.py"
    if not source.is_file():
        return set()
    tree = ast.parse(source.read_text(), filename=str(source))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(argument.arg == "snap_compare" for argument in node.args.args)
    }


def test_every_baseline_has_a_snapshot_test() -> None:
    baselines = sorted(SNAPSHOTS.glob("*/*.svg"))
    assert baselines, f"no baselines found under {SNAPSHOTS}"
    orphans = [
        str(baseline.relative_to(REPO_ROOT))
        for baseline in baselines
        # A parametrized test's baseline is named test_name[id]; a second snapshot in one test
        # is test_name.1.
        if re.split(r"[\[.]", baseline.stem, maxsplit=1)[0]
        not in snapshot_tests(baseline.parent.name)
    ]
    assert orphans == []
