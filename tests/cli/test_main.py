"""The `fisk` entry point imports the module of the command it runs and no other, while
`fisk --help` and a mistyped command still name every command."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fisk_ai.cli.main import COMMAND_MODULES, MODULE_OF_COMMAND, build_parser

REPO_ROOT = Path(__file__).resolve().parents[2]
FISK = Path(sys.executable).parent / "fisk"

PROBE = """
import contextlib, io, json, sys
from fisk_ai.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps(sorted(name for name in sys.modules if name.startswith('fisk_ai.cli.'))))
"""


def command_modules_imported(*args: str) -> set[str]:
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    imported = json.loads(probe.stdout.splitlines()[-1])
    return {name.removeprefix("fisk_ai.cli.") for name in imported} & set(COMMAND_MODULES)


def registered_names() -> set[str]:
    parser = build_parser()
    [subcommands] = [
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    ]
    return set(subcommands.choices)


def test_every_name_a_command_answers_to_is_known_without_importing_it() -> None:
    assert registered_names() == set(MODULE_OF_COMMAND)


@pytest.mark.parametrize(
    ("args", "module"),
    [
        (["session", "--state-dir", "/nonexistent-fisk-state", "ls"], "session"),
        (["k", "--help"], "knowledge"),
        (["info", "--help"], "info"),
    ],
)
def test_a_command_imports_its_own_module_alone(args: list[str], module: str) -> None:
    assert command_modules_imported(*args) == {module}


def test_help_lists_every_command() -> None:
    result = subprocess.run([str(FISK), "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0
    for name in ("run", "session", "info", "serve", "jobs", "mcp", "knowledge (rag, k)"):
        assert f"    {name}" in result.stdout
    assert "discover" in result.stdout


def test_a_mistyped_command_is_refused_naming_every_command() -> None:
    result = subprocess.run(
        [str(FISK), "sesion", "ls"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert "invalid choice: 'sesion'" in result.stderr
    assert "'session'" in result.stderr
    assert "'discover'" in result.stderr
