"""Leaving a run and continuing it: a crash, a clean Ctrl-C, and the resume gate.

The model asks for one command that blocks on its first run until the test releases it (or
kills it), so the run can be interrupted while the tool is running, found by its pid fifo rather
than by waiting. Every run of the command is logged, and the fake API keeps every request, so
the tests can show what ran and what was asked twice.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.lineui.run import SUSPEND_NOTICE
from fisk_ai.sessions import FileSessionStore, Meta
from tests.e2e.agent_runs import (
    command_output,
    fisk,
    fisk_environment,
    repeated_model_calls,
    session_id_of,
    summary_fields,
    tool_results,
    write_config,
)
from tests.e2e.resumable_runs import (
    ANSWER,
    DRAIN_TURNS,
    PROMPT,
    drain_application,
    finished,
    resume,
    running_tool_pid,
    start_run,
)
from tests.fakes.fiskapp import (
    kill_quietly,
    release,
    runs_of,
)
from tests.fakes.messages_api import FakeMessagesAPI, error, reply, text
from tests.patience import DEADLINE
from tests.sessions.builders import fingerprint

# The interrupted runs are module fixtures; on one xdist worker each runs once, not once per
# worker.
pytestmark = pytest.mark.xdist_group("e2e-resume")


@dataclass(frozen=True)
class Interrupted:
    """A run interrupted while its tool ran, then resumed: what each printed, what the model
    was sent across both, and every run of the command."""

    first: subprocess.CompletedProcess[str]
    resumed: subprocess.CompletedProcess[str]
    requests: list[Any]
    runs: list[list[str]]
    home: Path
    """The directory the run was started in, its agent.yaml and sessions/ under it."""


async def read_stderr_until(process: asyncio.subprocess.Process, wanted: str) -> str:
    assert process.stderr is not None
    seen = ""
    while wanted not in seen:
        line = await asyncio.wait_for(process.stderr.readline(), DEADLINE)
        if not line:
            raise AssertionError(f"fisk ended before printing {wanted!r}:\n{seen}")
        seen += line.decode()
    return seen


# Stops the run while its tool runs; returns how the run ended and the session to resume.
Stop = Callable[
    [Path, asyncio.subprocess.Process, int], Awaitable[tuple[subprocess.CompletedProcess[str], str]]
]


async def stop_mid_tool_then_resume(home: Path, stop: Stop) -> Interrupted:
    app, fifo = drain_application(home)
    config = write_config(home, application=app)
    tool_pid = 0
    with FakeMessagesAPI(DRAIN_TURNS) as api:
        env = fisk_environment(home, api)
        process = await start_run(home, config, env)
        try:
            tool_pid = await running_tool_pid(process, fifo)
            first, session = await stop(home, process, tool_pid)
            resumed = resume(home, session, env)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            if tool_pid:
                kill_quietly(tool_pid)
    return Interrupted(first, resumed, list(api.requests), runs_of(home / "runs"), home)


async def kill(
    home: Path, process: asyncio.subprocess.Process, tool_pid: int
) -> tuple[subprocess.CompletedProcess[str], str]:
    process.kill()
    first = await finished(process)
    (journal,) = (home / "sessions").glob("*.json")
    # The orphaned first run of the command is still blocked while the resume runs.
    return first, journal.stem


async def interrupt(
    home: Path, process: asyncio.subprocess.Process, tool_pid: int
) -> tuple[subprocess.CompletedProcess[str], str]:
    process.send_signal(signal.SIGINT)
    so_far = await read_stderr_until(process, SUSPEND_NOTICE)
    release(tool_pid)
    first = await finished(process, so_far)
    return first, session_id_of(first.stderr)


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Interrupted:
    return asyncio.run(stop_mid_tool_then_resume(tmp_path_factory.mktemp("crash"), kill))


@pytest.fixture(scope="module")
def suspended(tmp_path_factory: pytest.TempPathFactory) -> Interrupted:
    return asyncio.run(stop_mid_tool_then_resume(tmp_path_factory.mktemp("suspend"), interrupt))


# kill -9 while a tool runs.


def test_killed_run_resumes_and_completes(crashed: Interrupted) -> None:
    assert crashed.first.returncode == -signal.SIGKILL
    assert crashed.resumed.returncode == 0, crashed.resumed.stderr
    assert crashed.resumed.stdout == ANSWER + "\n"


def test_killed_run_repeats_no_recorded_model_call(crashed: Interrupted) -> None:
    assert len(crashed.requests) == 2
    assert repeated_model_calls(crashed.requests) == []


def test_killed_run_repeats_only_the_interrupted_tool_call(crashed: Interrupted) -> None:
    # The call was running when the process died and its result was never recorded, so the
    # resume runs it again: the one repeat a crash allows.
    assert crashed.runs == [["drain", "--", "n1"], ["drain", "--", "n1"]]
    result = command_output(tool_results(crashed.requests[1])["tu_drain"])
    assert result == "ran again\n"


# A first SIGINT while a tool runs.


def test_sigint_lets_the_running_step_finish(suspended: Interrupted) -> None:
    result = command_output(tool_results(suspended.requests[-1])["tu_drain"])
    assert result == "started\nreleased\n"


def test_sigint_exits_130_saying_how_to_resume(suspended: Interrupted) -> None:
    assert suspended.first.returncode == 130, suspended.first.stderr
    assert suspended.first.stdout == ""
    session = session_id_of(suspended.first.stderr)
    lines = suspended.first.stderr.splitlines()
    config, state = suspended.home / "agent.yaml", suspended.home / "sessions"
    assert lines[-1] == (
        f"resume with: fisk run --config {config} --state-dir {state} --resume {session}"
    )
    assert any(line.startswith("Run suspended: ") for line in lines)


def test_resume_after_sigint_repeats_nothing(suspended: Interrupted) -> None:
    assert len(suspended.requests) == 2
    assert repeated_model_calls(suspended.requests) == []
    assert suspended.runs == [["drain", "--", "n1"]]


def test_resume_after_sigint_completes(suspended: Interrupted) -> None:
    assert suspended.resumed.returncode == 0, suspended.resumed.stderr
    assert suspended.resumed.stdout == ANSWER + "\n"
    assert summary_fields(suspended.resumed.stderr)["llm_calls"] == "2"


# The resume gate.


@dataclass(frozen=True)
class OpenSession:
    """A journal left open by a run whose model call failed, with the model it started on."""

    journal: Path
    model: str

    @property
    def session(self) -> str:
        return self.journal.stem

    def copy_to(self, state: Path) -> None:
        state.mkdir(mode=0o700, parents=True)
        shutil.copy(self.journal, state / self.journal.name)


@pytest.fixture(scope="module")
def open_session(tmp_path_factory: pytest.TempPathFactory) -> OpenSession:
    home = tmp_path_factory.mktemp("open")
    config = write_config(home, model="claude-test-1")
    with FakeMessagesAPI([error(400, "the fake refuses this one")]) as api:
        failed = fisk(
            "run",
            "--no-tui",
            "--state-dir",
            str(home / "sessions"),
            "--config",
            str(config),
            PROMPT,
            cwd=home,
            env=fisk_environment(home, api),
        )
    assert failed.returncode == 1, failed.stderr
    return OpenSession(home / "sessions" / f"{session_id_of(failed.stderr)}.json", "claude-test-1")


def resume_in(
    home: Path, api: FakeMessagesAPI, session: str, *flags: str, model: str
) -> subprocess.CompletedProcess[str]:
    config = write_config(home, model=model)
    return fisk(
        "run",
        "--no-tui",
        "--state-dir",
        str(home / "sessions"),
        "--config",
        str(config),
        "--resume",
        session,
        *flags,
        cwd=home,
        env=fisk_environment(home, api),
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("fisk: error: ")
    return lines[0]


def test_changed_model_is_refused_naming_it(tmp_path: Path, open_session: OpenSession) -> None:
    open_session.copy_to(tmp_path / "sessions")
    with FakeMessagesAPI() as api:
        refused = resume_in(tmp_path, api, open_session.session, model="claude-test-2")
    line = one_line_error(refused)
    assert "model: claude-test-1 -> claude-test-2" in line
    assert "--force" in line
    assert api.requests == []


def test_force_continues_with_a_changed_model(tmp_path: Path, open_session: OpenSession) -> None:
    open_session.copy_to(tmp_path / "sessions")
    with FakeMessagesAPI([reply(text(ANSWER))]) as api:
        forced = resume_in(tmp_path, api, open_session.session, "--force", model="claude-test-2")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout == ANSWER + "\n"
    (request,) = api.requests
    assert request["model"] == "claude-test-2"
    assert request["messages"] == [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}]


def test_another_provider_is_refused_even_with_force(tmp_path: Path) -> None:
    async def write_journal() -> None:
        meta = Meta(
            "elsewhere-1", datetime.now(UTC), fingerprint(provider="elsewhere"), "drain node n1"
        )
        journal = await FileSessionStore(tmp_path / "sessions").create("elsewhere-1", meta)
        await journal.close()

    asyncio.run(write_journal())
    with FakeMessagesAPI() as api:
        refused = resume_in(tmp_path, api, "elsewhere-1", "--force", model="claude-sonnet")
    line = one_line_error(refused)
    assert "llm.provider elsewhere" in line
    assert "not even with --force" in line
    assert api.requests == []
