"""`fisk session ls`: the Go version's columns, with their words, for scripts, and the STATE
column giving each session the word the browser and the viewer give it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.cli.main import main
from tests.screens.endings import ENDINGS, NOW, run_id_of, write_every_ending, write_touched

GO_STATUS = {
    "completed": "completed",
    "answered": "suspended",
    "suspended at a question": "suspended",
    "max_iterations": "max_iterations",
    "failed": "error",
    "budget": "budget",
    "open": "open",
}
"""The journal's own reason, as the Go version's STATUS column prints it."""


def session_ls(directory: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["session", "--state-dir", str(directory), "ls"]) == 0
    return capsys.readouterr().out.splitlines()


def column(lines: list[str], name: str, following: str) -> dict[str, str]:
    """Each row's cell under ``name`` (up to the column ``following``), by id."""
    header, *rows = lines
    start, end = header.index(name), header.index(following)
    return {row.split()[0]: row[start:end].strip() for row in rows}


def test_the_go_columns_come_first_in_their_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_every_ending(tmp_path)
    header = session_ls(tmp_path, capsys)[0]
    assert header.split() == ["ID", "MODEL", "STATUS", "UPDATED", "STATE", "PROMPT"]


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_status_is_the_journals_own_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ending: str
) -> None:
    journal_of, _ = ENDINGS[ending]
    run_id = write_touched(tmp_path, journal_of(), NOW)
    status = column(session_ls(tmp_path, capsys), "STATUS", "UPDATED")
    assert status[run_id] == GO_STATUS[ending]


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_state_is_the_word_the_browser_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ending: str
) -> None:
    journal_of, word = ENDINGS[ending]
    records = journal_of()
    write_touched(tmp_path, records, NOW)
    state = column(session_ls(tmp_path, capsys), "STATE", "PROMPT")
    assert state[run_id_of(records)] == word


def test_the_prompt_follows_the_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal_of, _ = ENDINGS["max_iterations"]
    write_touched(tmp_path, journal_of(), NOW)
    [row] = session_ls(tmp_path, capsys)[1:]
    assert row.endswith("limit  check every consumer of every stream")
