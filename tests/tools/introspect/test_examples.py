"""The shipped example applications, run as fisk-ai runs them: as executables."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from tests.conftest import REPO_ROOT
from tests.patience import DEADLINE

COWSAY = REPO_ROOT / "examples" / "cowsay" / "cowsay.py"
OPS = REPO_ROOT / "examples" / "ops" / "ops.py"


def run_example(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=DEADLINE,
    )


def introspect(application: str) -> dict[str, Any]:
    result = run_example(application, "--fisk-introspect")
    assert result.returncode == 0, result.stderr
    model: dict[str, Any] = json.loads(result.stdout)
    return model


def commands_by_path(model: dict[str, Any]) -> dict[str, dict[str, Any]]:
    def walk(commands: list[dict[str, Any]], prefix: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for command in commands:
            path = f"{prefix}{command['name']}"
            yield path, command
            yield from walk(command.get("commands", []), f"{path} ")

    return dict(walk(model.get("commands", []), ""))


@pytest.fixture(scope="module")
def cowsay_model() -> dict[str, Any]:
    return introspect(str(COWSAY))


@pytest.fixture(scope="module")
def ops_model() -> dict[str, Any]:
    return introspect(str(OPS))


def test_cowsay_introspects_as_say_and_think(cowsay_model: dict[str, Any]) -> None:
    commands = commands_by_path(cowsay_model)
    assert (cowsay_model["name"], cowsay_model["help"]) == (
        "cowsay",
        "Tools for the Cowsay LLM Agent",
    )
    assert sorted(commands) == ["say", "think"]
    assert commands["say"]["restricted_schema"]["required"] == ["message"]


def test_cowsay_says_with_a_talking_cow() -> None:
    result = run_example(str(COWSAY), "say", "--", "Hello AI")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == [" __________", "< Hello AI >", " ----------"]
    assert lines[3].strip() == "\\   ^__^"


def test_cowsay_thinks_with_a_thinking_cow() -> None:
    result = run_example(str(COWSAY), "think", "--", "Moo")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "( Moo )"
    assert lines[3].strip() == "o   ^__^"


def test_cowsay_wraps_long_messages_at_forty_columns() -> None:
    result = run_example(str(COWSAY), "say", "--", "moo " * 30)
    bubble = [line for line in result.stdout.splitlines() if line[:1] in ("/", "|", "\\")]
    assert len(bubble) > 1
    assert all(len(line) <= 44 for line in bubble)


def test_ops_introspects_with_its_tags(ops_model: dict[str, Any]) -> None:
    tags = {path: command.get("tags", []) for path, command in commands_by_path(ops_model).items()}
    assert tags["status"] == ["ai:read_only"]
    assert tags["disk usage"] == ["ai:read_only"]
    assert tags["service list"] == ["ai:read_only"]
    assert tags["service restart"] == ["ai:confirm", "ai:destructive"]
    assert tags["cache purge"] == ["impact:rw"]
    assert tags["secrets show"] == ["ai:deny"]


def test_ops_hides_debug_and_offers_a_context_flag(ops_model: dict[str, Any]) -> None:
    assert commands_by_path(ops_model)["debug"]["hidden"] is True
    assert [flag["name"] for flag in ops_model["flags"]] == ["context"]
    assert ops_model["flags"][0]["help"] == "Fleet context to operate on"


def test_ops_schemas_are_valid(ops_model: dict[str, Any]) -> None:
    for command in commands_by_path(ops_model).values():
        jsonschema.Draft202012Validator.check_schema(command["restricted_schema"])


def test_ops_restart_in_tool_call_order_uses_the_given_context() -> None:
    result = run_example(str(OPS), "service", "restart", "--context=prod", "--", "web")
    assert result.returncode == 0, result.stderr
    assert "context prod" in result.stdout
    assert "restarted web" in result.stdout
