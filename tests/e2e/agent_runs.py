"""Driving `fisk run` as a user would: the installed command against the fake Messages API.

The fake runs in the test process; the `fisk` subprocess reaches it through
``ANTHROPIC_BASE_URL`` with a made-up key. Every run gets its own state directory, and the
environment is cleaned of anything that would change the output (NO_COLOR, VERBOSE, ...).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.conftest import FISK_VARIABLES, TERMINAL_VARIABLES, TEST_TERM, textual_setting
from tests.e2e.conftest import FISK
from tests.fakes.messages_api import FakeMessagesAPI
from tests.patience import DEADLINE

FAKE_KEY = "sk-fake-e2e"
SUMMARY_LABELS = ("Run summary:", "Run suspended:")

# Variables that would change what a run prints or where it reaches, unset for every run (the
# suite's fixture unsets them for each test; a module's fixture runs before it does).
_SURFACE_VARIABLES = (*TERMINAL_VARIABLES, *FISK_VARIABLES, "FISK_AI_CASSETTE")


def fisk_environment(
    home: Path, api: FakeMessagesAPI | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a run: state under ``home``, pointed at ``api`` when given."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in _SURFACE_VARIABLES and not textual_setting(name)
    }
    environment["TERM"] = TEST_TERM
    environment["XDG_STATE_HOME"] = str(home / "xdg-state")
    if api is not None:
        environment["ANTHROPIC_BASE_URL"] = api.base_url
        environment["ANTHROPIC_API_KEY"] = FAKE_KEY
    environment.update(extra or {})
    return environment


def fisk(
    *args: str, cwd: Path, env: Mapping[str, str], timeout: float = DEADLINE
) -> subprocess.CompletedProcess[str]:
    """Run `fisk ARGS...` to the end with stdin closed and its output captured (pipes)."""
    return subprocess.run(
        [str(FISK), *args],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def write_config(
    directory: Path,
    *,
    application: Path | None = None,
    model: str = "claude-test-1",
    extra: str = "",
) -> Path:
    """An agent.yaml in ``directory`` wrapping ``application`` with this model."""
    lines = [f"application_path: {application}"] if application is not None else []
    lines += [
        "system_prompt: |",
        "  You look after a small fleet. Answer in short markdown.",
        "llm:",
        f"  model: {model}",
    ]
    path = directory / "agent.yaml"
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def session_id_of(stderr: str) -> str:
    """The session id a run printed in its summary line."""
    for line in stderr.splitlines():
        if line.startswith(SUMMARY_LABELS):
            for field in line.split():
                if field.startswith("session="):
                    return field.removeprefix("session=")
    raise AssertionError(f"no session id in the run's stderr:\n{stderr}")


def summary_fields(stderr: str) -> dict[str, str]:
    """The key=value fields of the run summary line (latency included, whatever it was)."""
    lines = [line for line in stderr.splitlines() if line.startswith(SUMMARY_LABELS)]
    assert len(lines) == 1, stderr
    return dict(field.split("=", 1) for field in lines[0].split() if "=" in field)


def tool_results(request: Mapping[str, Any]) -> dict[str, Any]:
    """tool_use_id -> the content of each tool_result in the last message of a request."""
    content = request["messages"][-1]["content"]
    return {
        block["tool_use_id"]: block["content"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_result"
    }


def command_output(content: Any) -> str:
    """The command's output from a command tool's result content (a CommandResult JSON)."""
    text = content if isinstance(content, str) else "".join(block["text"] for block in content)
    result: dict[str, Any] = json.loads(text)
    output: str = result["output"]
    return output


def repeated_model_calls(requests: Sequence[Any]) -> list[int]:
    """1-based numbers of requests whose conversation an earlier request already sent."""
    seen: set[str] = set()
    repeats = []
    for number, body in enumerate(requests, start=1):
        key = json.dumps(body["messages"], sort_keys=True)
        if key in seen:
            repeats.append(number)
        seen.add(key)
    return repeats


def start_fisk_mcp(home: Path, config: Path) -> tuple[subprocess.Popen[str], list[str]]:
    """`fisk mcp --config CONFIG` started in ``home`` on a port the system picks (a config's
    ``port: 0`` means the default, 8080, which another test may hold), and its banner up to the
    line that tells Claude Code where it serves (the URL is that line's last word). A server
    that ends before serving fails the test with what it wrote to stderr."""
    process = subprocess.Popen(
        [str(FISK), "mcp", "--config", str(config), "--port", "0"],
        cwd=home,
        env=fisk_environment(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    banner: list[str] = []
    for line in process.stdout:
        banner.append(line)
        if line.startswith("    claude mcp add"):
            return process, banner
    _, stderr = process.communicate(timeout=DEADLINE)
    raise AssertionError(f"fisk mcp ended before serving:\n{stderr}")
