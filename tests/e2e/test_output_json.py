"""`fisk run --no-tui --output json|stream-json` as a CI job runs it: the installed command
against the fake Messages API, every line it prints checked against the schemas the package
ships, and the exit code naming the outcome."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import select
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.lineui.output import validator
from tests.e2e.agent_runs import fisk, fisk_environment, write_config
from tests.e2e.conftest import FISK
from tests.e2e.waiting_session import SESSION, write_waiting_session
from tests.fakes.fiskapp import application, arg, command, write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, Turn, error, reply, text, tool_use, usage
from tests.fakes.watched_messages_api import HANG_GUARD, WatchedMessagesAPI

pytestmark = pytest.mark.xdist_group("e2e-output-json")

ANSWER = "All **three** nodes are up."


def fleet_config(home: Path, extra: str = "") -> Path:
    app = write_fake_app(
        home,
        application(
            "fleet",
            commands=[command("status", "Fleet status", args=[arg("node", "Which node")])],
        ),
        name="fleet",
    )
    return write_config(home, application=app, extra=extra)


def json_run(
    home: Path, turns: list[Turn], output: str, *flags: str, extra: str = ""
) -> subprocess.CompletedProcess[str]:
    config = fleet_config(home, extra)
    with FakeMessagesAPI(turns) as api:
        return fisk(
            "run",
            "--no-tui",
            "--output",
            output,
            "--state-dir",
            str(home / "sessions"),
            "--config",
            str(config),
            *flags,
            "how is the fleet",
            cwd=home,
            env=fisk_environment(home, api),
        )


def resume_command(home: Path, session: str) -> str:
    """The command that continues ``session`` of a run under ``home``'s agent.yaml and
    sessions directory, named by the absolute paths the run was given."""
    return shlex.join(
        [
            *("fisk", "run", "--config", str(home / "agent.yaml")),
            *("--state-dir", str(home / "sessions"), "--resume", session),
        ]
    )


def result_of(ran: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The one object --output json printed, after checking it against the result schema."""
    lines = ran.stdout.splitlines()
    assert len(lines) == 1, ran.stdout + ran.stderr
    printed: dict[str, Any] = json.loads(lines[0])
    validator("run-result.schema.json").validate(printed)
    return printed


TOOL_TURNS = [
    reply(
        tool_use("tu_1", "status", {"node": "n1"}),
        stop_reason="tool_use",
        usage_counts=usage(100, 20, cache_read=40, cache_create=7),
    ),
    reply(text(ANSWER), usage_counts=usage(60, 10, cache_read=80)),
]


@pytest.fixture(scope="module")
def tool_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """A run that calls one command, then answers: shared, since a run takes seconds."""
    return json_run(tmp_path_factory.mktemp("tool"), TOOL_TURNS, "json")


def test_a_completed_run_prints_one_result_with_its_answer_and_exits_0(
    tool_run: subprocess.CompletedProcess[str],
) -> None:
    ran = tool_run

    assert ran.returncode == 0, ran.stderr
    printed = result_of(ran)
    assert printed["answer"] == ANSWER
    assert printed["outcome"] == {"kind": "completed", "reason": ""}
    assert printed["model"] == "claude-test-1"
    assert printed["resume_command"] is None


def test_the_result_counts_tokens_and_calls(tool_run: subprocess.CompletedProcess[str]) -> None:
    printed = result_of(tool_run)

    assert printed["usage"] == {
        "input_tokens": 160,
        "output_tokens": 30,
        "cache_read_tokens": 120,
        "cache_write_tokens": 7,
        "thinking_tokens": 0,
    }
    assert (printed["llm_calls"], printed["tool_calls"]) == (2, 1)


def test_the_result_lists_each_tool_call_with_argv_and_exit_status(
    tool_run: subprocess.CompletedProcess[str],
) -> None:
    printed = result_of(tool_run)

    [call] = printed["calls"]
    assert call["id"] == "tu_1"
    assert call["name"] == "status"
    assert "n1" in call["argv"]
    assert (call["status"], call["exit_code"]) == ("ok", 0)


def test_the_session_id_is_the_one_the_summary_names(
    tool_run: subprocess.CompletedProcess[str],
) -> None:
    assert f"session={result_of(tool_run)['session_id']} " in tool_run.stderr


def test_stream_json_prints_each_event_as_a_line_and_the_result_last(tmp_path: Path) -> None:
    ran = json_run(tmp_path, TOOL_TURNS, "stream-json")

    assert ran.returncode == 0, ran.stderr
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    check = validator("run-event.schema.json")
    for line in lines:
        check.validate(line)
    kinds = [line.get("kind") for line in lines[:-1]]
    assert kinds.index("tool_call") < kinds.index("tool_result")
    assert lines[-2] == {
        "type": "event",
        "kind": "text",
        "time": lines[-2]["time"],
        "block": {"text": ANSWER, "final": True},
    }
    assert lines[-1]["type"] == "result"
    assert lines[-1]["answer"] == ANSWER


def test_a_declined_run_names_the_outcome_and_exits_4(tmp_path: Path) -> None:
    ran = json_run(tmp_path, [reply(text("I will not."), stop_reason="refusal")], "json")

    assert ran.returncode == 4, ran.stderr
    printed = result_of(ran)
    assert printed["outcome"]["kind"] == "declined"
    assert printed["outcome"]["text"] == "I will not."
    assert printed["answer"] == ""


def test_a_failed_model_call_names_the_outcome_and_exits_3(tmp_path: Path) -> None:
    ran = json_run(tmp_path, [error(400, "prompt is too long")], "json")

    assert ran.returncode == 3, ran.stderr
    printed = result_of(ran)
    assert printed["outcome"]["kind"] == "failed"
    assert "prompt is too long" in printed["outcome"]["reason"]
    assert printed["resume_command"] == resume_command(tmp_path, printed["session_id"])


def test_a_spent_budget_names_the_outcome_and_exits_6(tmp_path: Path) -> None:
    ran = json_run(
        tmp_path,
        TOOL_TURNS,
        "json",
        extra="  budget:\n    max_tokens: 50\n",
    )

    assert ran.returncode == 6, ran.stderr
    assert result_of(ran)["outcome"]["kind"] == "budget_spent"


def test_a_deferred_run_says_what_it_waits_for_and_how_to_resume(tmp_path: Path) -> None:
    state = tmp_path / "sessions"
    write_waiting_session(state)
    config = tmp_path / "agent.yaml"
    config.write_text("system_prompt: You approve changes.\nllm:\n  model: claude-sonnet\n")
    with FakeMessagesAPI([]) as api:
        ran = fisk(
            "run",
            "--no-tui",
            "--output",
            "json",
            "--config",
            str(config),
            "--state-dir",
            str(state),
            "--resume",
            SESSION,
            "--force",
            cwd=tmp_path,
            env=fisk_environment(tmp_path, api),
        )

    assert ran.returncode == 7, ran.stderr
    printed = result_of(ran)
    assert printed["outcome"]["kind"] == "deferred"
    assert printed["pending"] == [
        {"call_id": "tu_2", "name": "approve_change", "deferred": True, "note": "waiting for CAB"}
    ]
    assert printed["resume_command"] == resume_command(tmp_path, SESSION)


def test_text_output_on_the_same_run_prints_the_answer_alone(tmp_path: Path) -> None:
    ran = json_run(tmp_path, TOOL_TURNS, "text")

    assert (ran.returncode, ran.stdout) == (0, ANSWER + "\n")


async def interrupted_during_the_model_call(home: Path) -> tuple[int, str]:
    """A json run sent SIGINT while its first model call is held: its exit code and stdout."""
    config = fleet_config(home)
    with WatchedMessagesAPI([reply(text(ANSWER))]) as api:
        api.hold(1)
        process = await asyncio.create_subprocess_exec(
            str(FISK),
            "run",
            "--no-tui",
            "--output",
            "json",
            "--state-dir",
            str(home / "sessions"),
            "--config",
            str(config),
            "how is the fleet",
            cwd=home,
            env=fisk_environment(home, api),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            await api.arrived()
            process.send_signal(signal.SIGINT)
            stdout, _ = await process.communicate()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert process.returncode is not None
    return process.returncode, stdout.decode()


def test_a_suspended_run_names_the_outcome_and_how_to_resume(tmp_path: Path) -> None:
    code, stdout = asyncio.run(interrupted_during_the_model_call(tmp_path))

    assert code == 130, stdout
    [line] = stdout.splitlines()
    printed = json.loads(line)
    validator("run-result.schema.json").validate(printed)
    assert printed["outcome"]["kind"] == "suspended"
    assert printed["resume_command"] == resume_command(tmp_path, printed["session_id"])


def on_a_terminal(home: Path, *args: str) -> tuple[int, str]:
    """`fisk ARGS` with stdin, stdout and stderr on one pseudo-terminal: its exit code and all
    it wrote there."""
    config = fleet_config(home)
    leader, follower = pty.openpty()
    with FakeMessagesAPI([reply(text(ANSWER))]) as api:
        process = subprocess.Popen(
            [str(FISK), *args, "--state-dir", str(home / "sessions"), "--config", str(config)],
            cwd=home,
            env=fisk_environment(home, api, {"TERM": "xterm-256color"}),
            stdin=follower,
            stdout=follower,
            stderr=follower,
        )
        os.close(follower)
        written = b""
        try:
            while select.select([leader], [], [], HANG_GUARD)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed: fisk has exited
                    break
                if not chunk:
                    break
                written += chunk
        finally:
            if process.poll() is None:
                process.kill()
            code = process.wait()
            os.close(leader)
    return code, written.decode(errors="replace")


def test_json_output_on_a_terminal_uses_the_line_surface(tmp_path: Path) -> None:
    code, written = on_a_terminal(tmp_path, "run", "--output", "json", "how is the fleet")

    assert code == 0, written
    assert "\x1b[?1049h" not in written  # the full screen's alternate buffer was never entered
    [line] = [line for line in written.splitlines() if line.startswith("{")]
    assert json.loads(line)["answer"] == ANSWER
