"""`fisk session ls | show | rm` over journals written by the real file store."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fisk_ai.sessions import FileSessionStore, Terminal, TerminalReason
from tests.e2e.conftest import RunFisk
from tests.sessions.builders import meta, result, turn


def write_session(directory: Path, run_id: str, prompt: str, *, completed: bool) -> None:
    async def write() -> None:
        store = FileSessionStore(directory)
        journal = await store.create(run_id, meta(run_id, prompt))
        await journal.append(turn(1, "tu_1", text="Checking the stream."))
        await journal.append(result("tu_1", "ORDERS: 3 consumers"))
        if completed:
            await journal.append(turn(2, text="ORDERS has three consumers."))
            await journal.append(Terminal(TerminalReason.COMPLETED))
        await journal.close()

    asyncio.run(write())


def test_ls_lists_status_model_and_prompt(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_session(state, "done-1", "report on the ORDERS stream", completed=True)
    write_session(state, "open-1", "x" * 80, completed=False)
    result_ = run_fisk("session", "--state-dir", str(state), "ls")
    assert result_.returncode == 0, result_.stderr
    rows = {line.split()[0]: line for line in result_.stdout.splitlines()[1:]}
    assert set(rows) == {"done-1", "open-1"}
    assert "completed" in rows["done-1"] and "report on the ORDERS stream" in rows["done-1"]
    assert "open" in rows["open-1"] and "x" * 50 + "..." in rows["open-1"]


def test_show_prints_counters_and_the_transcript(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_session(state, "done-1", "report on the ORDERS stream", completed=True)
    shown = run_fisk("session", "--state-dir", str(state), "show", "done-1", "--transcript")
    assert shown.returncode == 0, shown.stderr
    assert "Status: completed" in shown.stdout
    assert "LLM calls: 2" in shown.stdout
    transcript = shown.stdout.split("--- transcript ---\n", 1)[1]
    assert transcript.splitlines() == [
        "> report on the ORDERS stream",
        "Checking the stream.",
        "-> tool_tu_1",
        "<- [tu_1] ORDERS: 3 consumers",
        "ORDERS has three consumers.",
    ]


def test_an_open_session_shows_its_pending_call(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"

    async def write() -> None:
        journal = await FileSessionStore(state).create("mid-1", meta("mid-1"))
        await journal.append(turn(1, "tu_1", "tu_2"))
        await journal.append(result("tu_1"))
        await journal.close()

    asyncio.run(write())
    shown = run_fisk("session", "--state-dir", str(state), "show", "mid-1")
    assert "Pending: tool_tu_2 (tu_2)" in shown.stdout


def test_rm_removes_the_session(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_session(state, "done-1", "p", completed=True)
    removed = run_fisk("session", "--state-dir", str(state), "rm", "done-1")
    assert removed.returncode == 0 and removed.stdout == "Removed session done-1\n"
    assert run_fisk("session", "--state-dir", str(state), "ls").stdout.startswith("No sessions")


def test_an_unknown_session_is_one_sentence(tmp_path: Path, run_fisk: RunFisk) -> None:
    shown = run_fisk("session", "--state-dir", str(tmp_path), "show", "nope")
    assert shown.returncode == 1
    assert shown.stderr.count("\n") == 1 and "nope" in shown.stderr


def test_state_dir_is_refused_with_a_jetstream_backend(tmp_path: Path, run_fisk: RunFisk) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        "nats_context: prod\nharness:\n  sessions:\n    backend: jetstream\n"
        "    options: {stream: FISK_SESSIONS}\n"
    )
    listed = run_fisk("session", "--config", str(config), "--state-dir", str(tmp_path), "ls")
    assert listed.returncode == 1
    assert "--state-dir" in listed.stderr and "Traceback" not in listed.stderr


def test_rm_refuses_a_session_a_workstation_holds(tmp_path: Path, run_fisk: RunFisk) -> None:
    state = tmp_path / "runs"
    write_session(state, "open-1", "p", completed=False)
    lease = FileSessionStore(state).lease("open-1", "the workstation fisk run (pid 42 on box)")
    try:
        refused = run_fisk("session", "--state-dir", str(state), "rm", "open-1")
    finally:
        lease.release()
    assert refused.returncode == 1
    assert "open in the workstation fisk run (pid 42 on box)" in refused.stderr
    assert (state / "open-1.json").exists()
    removed = run_fisk("session", "--state-dir", str(state), "rm", "open-1")
    assert removed.returncode == 0, removed.stderr
