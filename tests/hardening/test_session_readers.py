"""`fisk session ls`, `show` and `info` on hostile journals: one clear line, never a traceback
or a hang (issue 16, items 3, 7 and 11)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fisk_ai.cli.main import main
from fisk_ai.sessions import FileSessionStore, SessionStatus
from fisk_ai.sessions.records import encode_record
from tests.sessions.builders import journal, meta, turn


def write_journal(directory: Path, run_id: str, *lines: bytes) -> Path:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / f"{run_id}.json"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    path.chmod(0o600)
    return path


def good_lines(run_id: str, prompt: str = "hello") -> list[bytes]:
    return [encode_record(record) for record in journal(turn(1), first=meta(run_id, prompt))]


def nested(depth: int) -> bytes:
    return b'{"seq":2,"protocol":"x","a":' + b"[" * depth + b"]" * depth + b"}"


async def test_a_deeply_nested_line_marks_its_journal_corrupt(tmp_path: Path) -> None:
    write_journal(tmp_path, "good", *good_lines("good"))
    write_journal(tmp_path, "deep", good_lines("deep")[0], nested(100_000), good_lines("x")[1])
    summaries = {summary.run_id: summary for summary in await FileSessionStore(tmp_path).list()}
    assert summaries["good"].status is not SessionStatus.CORRUPT
    assert summaries["deep"].status is SessionStatus.CORRUPT
    assert "nests deeper than" in summaries["deep"].problem


def test_session_ls_lists_past_a_nested_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_journal(tmp_path, "good", *good_lines("good"))
    write_journal(tmp_path, "deep", good_lines("deep")[0], nested(5000), good_lines("x")[1])
    assert main(["session", "--state-dir", str(tmp_path), "ls"]) == 0
    out = capsys.readouterr().out
    assert "good" in out
    assert "deep" in out


def test_a_fifo_in_the_state_directory_does_not_hang_ls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_journal(tmp_path, "good", *good_lines("good"))
    os.mkfifo(tmp_path / "pipe.json", 0o600)
    assert main(["session", "--state-dir", str(tmp_path), "ls"]) == 0
    out = capsys.readouterr().out
    assert "good" in out
    assert "pipe" in out
    assert "corrupt" in out


def test_a_lone_surrogate_in_a_journal_is_shown_not_raised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [line.replace(b"hello", b"bad\\ud800") for line in good_lines("sur", "hello")]
    lines[1] = lines[1].replace(b"turn 1", b"text \\udfff here")
    write_journal(tmp_path, "sur", *lines)
    assert main(["session", "--state-dir", str(tmp_path), "ls"]) == 0
    assert main(["session", "--state-dir", str(tmp_path), "show", "sur"]) == 0
    assert main(["session", "--state-dir", str(tmp_path), "show", "sur", "--transcript"]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")
    assert "bad\ufffd" in out
    assert "text \ufffd here" in out


def test_session_show_strips_control_from_grants_and_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = meta("ctl", "hello", conversation_token="tok\x1b]0;evil\x07en\u202e")
    write_journal(tmp_path, "ctl", *[encode_record(r) for r in journal(turn(1), first=first)])
    assert main(["session", "--state-dir", str(tmp_path), "show", "ctl"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "\u202e" not in out
    assert "token" in out


@pytest.mark.parametrize(
    "index",
    [
        b'{"version": 2, "sessions": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"version": 2, "sessions": {"good": [' + b"9" * 5000 + b"]}}",
        b'{"version": 2e999, "sessions": {}}',
    ],
    ids=["deep", "long-integer", "out-of-range"],
)
def test_session_ls_lists_past_a_hostile_index(
    index: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_journal(tmp_path, "good", *good_lines("good"))
    (tmp_path / ".index.json").write_bytes(index)
    assert main(["session", "--state-dir", str(tmp_path), "ls"]) == 0
    assert "good" in capsys.readouterr().out


def test_session_ls_does_not_wait_on_a_fifo_in_the_index_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_journal(tmp_path, "good", *good_lines("good"))
    os.mkfifo(tmp_path / ".index.json")
    assert main(["session", "--state-dir", str(tmp_path), "ls"]) == 0
    assert "good" in capsys.readouterr().out
