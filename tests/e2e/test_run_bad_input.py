"""`fisk run` refuses bad input with one clear sentence, exit code 1, and no model call."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from fisk_ai.sessions import FileSessionStore, Terminal, TerminalReason
from tests.conftest import REPO_ROOT
from tests.e2e.agent_runs import fisk, fisk_environment, write_config
from tests.fakes.messages_api import FakeMessagesAPI
from tests.sessions.builders import meta, result, turn

SESSION = "run-1"


def one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("fisk: error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def run_against_fake(
    home: Path, *args: str, api: FakeMessagesAPI
) -> subprocess.CompletedProcess[str]:
    config = write_config(home)
    return fisk(
        "run",
        "--no-tui",
        "--state-dir",
        str(home / "sessions"),
        "--config",
        str(config),
        *args,
        cwd=home,
        env=fisk_environment(home, api),
    )


def test_resume_with_a_prompt_is_refused(tmp_path: Path) -> None:
    with FakeMessagesAPI() as api:
        refused = run_against_fake(tmp_path, "--resume", SESSION, "and", "more", api=api)
    one_line_error(refused, "--resume", "prompt")
    assert api.requests == []


def test_force_without_resume_is_refused(tmp_path: Path) -> None:
    with FakeMessagesAPI() as api:
        refused = run_against_fake(tmp_path, "--force", "drain node n1", api=api)
    one_line_error(refused, "--force", "--resume")
    assert api.requests == []


def write_journal(state: Path) -> Path:
    """A four-record journal (meta, a turn with a call, its result, the answer) left open."""

    async def write() -> None:
        journal = await FileSessionStore(state).create(SESSION, meta(SESSION))
        await journal.append(turn(1, "tu_1", text="Looking."))
        await journal.append(result("tu_1", "ORDERS: 3 consumers"))
        await journal.append(turn(2, "tu_2", text="Looking again."))
        await journal.close()

    asyncio.run(write())
    return state / f"{SESSION}.json"


def rewrite_lines(journal: Path, lines: list[str]) -> None:
    journal.write_text("".join(line + "\n" for line in lines))


def test_corrupt_line_mid_journal_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / "sessions")
    lines = journal.read_text().splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]
    rewrite_lines(journal, lines)
    with FakeMessagesAPI() as api:
        refused = run_against_fake(tmp_path, "--resume", SESSION, api=api)
    one_line_error(refused, str(journal), "line 2")
    assert api.requests == []


def test_journal_with_a_gap_is_refused(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / "sessions")
    lines = journal.read_text().splitlines()
    rewrite_lines(journal, lines[:2] + lines[3:])
    with FakeMessagesAPI() as api:
        refused = run_against_fake(tmp_path, "--resume", SESSION, api=api)
    one_line_error(refused, SESSION, "record 4 skips ahead of record 2")
    assert api.requests == []


def test_foreign_record_version_is_refused(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / "sessions")
    lines = journal.read_text().splitlines()
    first = json.loads(lines[0])
    first["meta"]["version"] = 4
    rewrite_lines(journal, [json.dumps(first), *lines[1:]])
    with FakeMessagesAPI() as api:
        refused = run_against_fake(tmp_path, "--resume", SESSION, api=api)
    one_line_error(refused, SESSION, "version 4", "newer fisk-ai")
    assert api.requests == []


def test_completed_session_is_refused(tmp_path: Path) -> None:
    async def complete() -> None:
        journal = await FileSessionStore(tmp_path / "sessions").open(SESSION)
        await journal.append(result("tu_2", "done"))
        await journal.append(turn(3, text="All done."))
        await journal.append(Terminal(TerminalReason.COMPLETED))
        await journal.close()

    write_journal(tmp_path / "sessions")
    asyncio.run(complete())
    with FakeMessagesAPI() as api:
        refused = run_against_fake(tmp_path, "--resume", SESSION, api=api)
    one_line_error(refused, SESSION, "already completed")
    assert api.requests == []


def test_cassette_that_does_not_match_names_the_model_call(tmp_path: Path) -> None:
    cassette = REPO_ROOT / "examples/cowsay/joke.cassette"
    ended = fisk(
        "run",
        "--no-tui",
        "--replay",
        str(cassette),
        "--config",
        str(REPO_ROOT / "examples/cowsay/agent.yaml"),
        "tell me two jokes",
        cwd=tmp_path,
        env=fisk_environment(tmp_path),
    )
    assert ended.returncode == 1, ended.stderr
    assert ended.stdout == ""
    assert "Traceback" not in ended.stderr
    (reason,) = [line for line in ended.stderr.splitlines() if "cassette" in line]
    assert str(cassette) in reason
    assert "model call 1" in reason
    assert '"tell me two jokes"' in reason


def test_missing_api_key_names_the_variable_and_the_flag(tmp_path: Path) -> None:
    refused = fisk(
        "run",
        "--no-tui",
        "--config",
        str(write_config(tmp_path)),
        "drain node n1",
        cwd=tmp_path,
        env=fisk_environment(tmp_path),
    )
    one_line_error(refused, "ANTHROPIC_API_KEY", "--api-key")


@pytest.mark.parametrize(
    "base_url",
    ["ftp://127.0.0.1:1", "http://user:secret@127.0.0.1:1", "http://"],
    ids=["scheme", "userinfo", "no host"],
)
def test_bad_base_url_names_the_flag(base_url: str, tmp_path: Path) -> None:
    refused = fisk(
        "run",
        "--no-tui",
        "--api-key",
        "sk-fake",
        "--base-url",
        base_url,
        "--config",
        str(write_config(tmp_path)),
        "drain node n1",
        cwd=tmp_path,
        env=fisk_environment(tmp_path),
    )
    line = one_line_error(refused, "--base-url")
    assert "secret" not in line


def test_a_line_mode_resume_of_a_conversation_between_turns_points_to_the_full_screen(
    tmp_path: Path,
) -> None:
    async def write() -> None:
        journal = await FileSessionStore(tmp_path / "sessions").create(SESSION, meta(SESSION))
        await journal.append(turn(1, text="First answer."))
        # A chat conversation rests this way once its turn is answered.
        await journal.append(Terminal(TerminalReason.SUSPENDED))
        await journal.close()

    asyncio.run(write())
    with FakeMessagesAPI() as api:
        refused = run_against_fake(tmp_path, "--resume", SESSION, api=api)
    line = one_line_error(refused, f"conversation {SESSION} is waiting for its next prompt")
    assert line.endswith(f"--resume {SESSION}")
    assert "without --no-tui: fisk run --config " in line
    assert api.requests == []
