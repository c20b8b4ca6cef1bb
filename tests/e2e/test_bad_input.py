"""Bad input gets one clear sentence, exit code 1 and no traceback (a traceback with --verbose)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import RunFisk
from tests.fakes.fiskapp import application, command, sample_model, write_fake_app


def assert_one_sentence_error(result: Any, *fragments: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("fisk: error: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


BAD_CONFIGS = {
    "unknown top-level key": ("identty: x\n", ["identty", "line 1"]),
    "unknown nested key": ("harness:\n  memroy: {}\n", ["harness.memroy", "line 2"]),
    "duplicate key": ("llm:\n  model: a\nllm:\n  model: b\n", ["llm", "line 3"]),
    "wrong type": ("llm:\n  budget:\n    max_iterations: lots\n", ["max_iterations", "line 3"]),
    "bad duration": ("harness:\n  tool_timeout: 5 minutes\n", ["harness.tool_timeout", "line 2"]),
    "bad regex": ("include:\n  tools: ['^say(']\n", ["include.tools", "line 2"]),
    "options typo": (
        "harness:\n  memory:\n    backend: jetstream\n    options: {bukcet: m}\n",
        ["harness.memory.options", "bukcet"],
    ),
    "unclosed reference": (
        "mcp_clients:\n  - name: docs\n    url: https://h/mcp\n    headers: {A: '${TOKEN'}\n",
        ["mcp_clients", "line 4"],
    ),
    "global flags without an application": ("global_flags: [context]\n", ["global_flags"]),
}


@pytest.mark.parametrize("case", BAD_CONFIGS, ids=list(BAD_CONFIGS))
def test_bad_configuration_is_one_sentence(case: str, tmp_path: Path, run_fisk: RunFisk) -> None:
    text, fragments = BAD_CONFIGS[case]
    config = tmp_path / "agent.yaml"
    config.write_text(text)
    assert_one_sentence_error(run_fisk("info", "--config", str(config)), *fragments)


def test_missing_configuration_names_the_flag(tmp_path: Path, run_fisk: RunFisk) -> None:
    result = run_fisk("info", "--config", str(tmp_path / "nope.yaml"))
    assert_one_sentence_error(result, "nope.yaml", "--config")


def test_verbose_adds_the_traceback(tmp_path: Path, run_fisk: RunFisk) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("identty: x\n")
    flagged = run_fisk("info", "--verbose", "--config", str(config))
    assert flagged.returncode == 1
    assert "Traceback" in flagged.stderr
    by_env = run_fisk("info", "--config", str(config), env={"VERBOSE": "1"})
    assert "Traceback" in by_env.stderr


SCHEMALESS = application("app", commands=[command("go", "Go", schema=None)])
LIST_SCHEMA = application("app", commands=[command("go", "Go", schema={"type": "array"})])
BAD_NAME = application("app", commands=[command("go.now", "Go")])

BAD_APPLICATIONS: dict[str, tuple[dict[str, Any], str, list[str]]] = {
    "exits non-zero": (sample_model(), "fail-on-introspect", ["status 3"]),
    "malformed JSON": (sample_model(), "malformed-introspect", ["JSON"]),
    "prints nothing": (sample_model(), "silent-introspect", ["nothing"]),
    "not an object": (sample_model(), "array-introspect", ["object"]),
    "over the cap": (sample_model(), "huge-introspect", ["16 MiB"]),
    "leaf without a schema": (SCHEMALESS, "echo", ["go", "0.9"]),
    "schema not an object": (LIST_SCHEMA, "echo", ["go", "object"]),
    "invalid tool name": (BAD_NAME, "echo", ["go.now"]),
}


@pytest.mark.parametrize("case", BAD_APPLICATIONS, ids=list(BAD_APPLICATIONS))
def test_bad_application_is_one_sentence(case: str, tmp_path: Path, run_fisk: RunFisk) -> None:
    model, behaviour, fragments = BAD_APPLICATIONS[case]
    app = write_fake_app(tmp_path, model, behaviour=behaviour)
    config = tmp_path / "agent.yaml"
    config.write_text(f"application_path: {app}\n")
    result = run_fisk("info", "--config", str(config))
    assert_one_sentence_error(result, "application_path", *fragments)


def test_missing_application_names_the_key(tmp_path: Path, run_fisk: RunFisk) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(f"application_path: {tmp_path / 'absent'}\n")
    assert_one_sentence_error(run_fisk("info", "--config", str(config)), "application_path")


def test_unknown_global_flag_names_the_key(tmp_path: Path, run_fisk: RunFisk) -> None:
    app = write_fake_app(tmp_path, sample_model())
    config = tmp_path / "agent.yaml"
    config.write_text(f"application_path: {app}\nglobal_flags: [contxt]\n")
    assert_one_sentence_error(run_fisk("info", "--config", str(config)), "global_flags", "contxt")
