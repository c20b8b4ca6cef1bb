"""`fisk session answer`: supplying the result of a deferred call to a suspended session, then
continuing it with `fisk run --resume`."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from fisk_ai.sessions import (
    FileSessionStore,
    ToolResult,
    fold,
)
from tests.e2e.conftest import RunFisk
from tests.e2e.waiting_session import SESSION, write_waiting_session
from tests.fakes.messages_api import FakeMessagesAPI, reply, text


def answered_line(state: Path) -> str:
    """What `fisk session answer --state-dir STATE` prints: the resume names that directory."""
    return (
        f"Answered tu_2 in session {SESSION}; continue it with: "
        f"fisk run --state-dir {state} --resume {SESSION}\n"
    )


def stored_results(directory: Path) -> list[ToolResult]:
    records = asyncio.run(FileSessionStore(directory).read(SESSION))
    return [record.payload for record in records if isinstance(record.payload, ToolResult)]


def answer(run_fisk: RunFisk, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_fisk("session", "--state-dir", str(state), "answer", SESSION, *args)


def test_show_lists_what_the_session_waits_on(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_waiting_session(state)

    shown = run_fisk("session", "--state-dir", str(state), "show", SESSION)

    assert shown.returncode == 0, shown.stderr
    assert "Waiting on: tu_2 approve_change: waiting for CAB" in shown.stdout


def test_an_answer_is_journaled_as_the_calls_one_result(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_waiting_session(state)

    answered = answer(run_fisk, state, "tu_2", "CAB approved CHG-7")

    assert (answered.returncode, answered.stdout, answered.stderr) == (0, answered_line(state), "")
    [_, supplied] = stored_results(state)
    assert (supplied.tool_use_id, supplied.result.content, supplied.result.is_error) == (
        "tu_2",
        "CAB approved CHG-7",
        False,
    )


def test_an_answer_read_from_a_file_can_report_a_failure(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_waiting_session(state)
    (tmp_path / "verdict.txt").write_text("CAB rejected CHG-7:\nfreeze in effect\n")

    answered = answer(run_fisk, state, "tu_2", "--file", "verdict.txt", "--error")

    assert answered.returncode == 0, answered.stderr
    [_, supplied] = stored_results(state)
    assert (supplied.result.content, supplied.result.is_error) == (
        "CAB rejected CHG-7:\nfreeze in effect\n",
        True,
    )


def test_an_answered_session_no_longer_waits(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_waiting_session(state)
    answer(run_fisk, state, "tu_2", "approved")

    shown = run_fisk("session", "--state-dir", str(state), "show", SESSION)

    assert "Waiting on" not in shown.stdout
    assert "Status: open" in shown.stdout


def test_an_unknown_call_is_refused_in_one_sentence(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_waiting_session(state)

    refused = answer(run_fisk, state, "tu_9", "approved")

    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1
    assert "not waiting on call tu_9" in refused.stderr
    assert len(stored_results(state)) == 1


def test_a_call_that_did_not_defer_is_refused(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_waiting_session(state)

    refused = answer(run_fisk, state, "tu_1", "something else")

    assert refused.returncode == 1
    assert "call tu_1" in refused.stderr and refused.stderr.count("\n") == 1


def test_a_second_answer_is_refused_as_already_answered(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_waiting_session(state)
    answer(run_fisk, state, "tu_2", "approved")

    refused = answer(run_fisk, state, "tu_2", "approved again")

    assert refused.returncode == 1
    assert "call tu_2 of session waiting-1 was already answered" in refused.stderr
    assert refused.stderr.count("\n") == 1
    assert [supplied.result.content for supplied in stored_results(state)][-1] == "approved"


def test_an_answer_needs_text_or_a_file_but_not_both(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_waiting_session(state)
    (tmp_path / "verdict.txt").write_text("approved")

    neither = answer(run_fisk, state, "tu_2")
    both = answer(run_fisk, state, "tu_2", "approved", "--file", "verdict.txt")

    assert (neither.returncode, both.returncode) == (1, 1)
    assert "--file" in neither.stderr and "--file" in both.stderr
    assert len(stored_results(state)) == 1


def test_an_unreadable_file_is_named(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_waiting_session(state)

    refused = answer(run_fisk, state, "tu_2", "--file", "missing.txt")

    assert refused.returncode == 1
    assert "--file missing.txt" in refused.stderr and refused.stderr.count("\n") == 1


def test_a_resume_after_the_answer_sends_it_to_the_model(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_waiting_session(state)
    answer(run_fisk, state, "tu_2", "CAB approved CHG-7")
    config = tmp_path / "agent.yaml"
    config.write_text("system_prompt: You approve changes.\nllm:\n  model: claude-sonnet\n")

    with FakeMessagesAPI([reply(text("The change is approved."))]) as api:
        environment = {
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_API_KEY": "sk-fake",
            "ANTHROPIC_AUTH_TOKEN": "",
        }
        # The journal was written by hand, so its configuration hashes differ from this one.
        resumed = run_fisk(
            "run",
            "--no-tui",
            "--config",
            str(config),
            "--state-dir",
            str(state),
            "--resume",
            SESSION,
            "--force",
            env=environment,
        )

    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "The change is approved.\n"
    [request] = api.requests
    results = {
        block["tool_use_id"]: block["content"]
        for block in request["messages"][-1]["content"]
        if block.get("type") == "tool_result"
    }
    assert results == {"tu_1": "ORDERS: 3 consumers", "tu_2": "CAB approved CHG-7"}
    stored = fold(asyncio.run(FileSessionStore(state).read(SESSION)))
    assert stored.completed
