"""The prompt history file: kept across sessions, private, capped, shared safely by two
workstations at once."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from fisk_ai.tui.prompt_history import (
    COMPACTION_SLACK,
    HISTORY_LIMIT,
    PromptHistory,
    PromptHistoryError,
    default_history_path,
    matching_prompts,
)
from tests.patience import DEADLINE

REPO_ROOT = Path(__file__).resolve().parents[2]


def history_in(tmp_path: Path, *, limit: int = HISTORY_LIMIT) -> PromptHistory:
    return PromptHistory(tmp_path / "state" / "history" / "prompts.jsonl", limit=limit)


def test_a_prompt_added_is_read_back_by_another_history_on_the_same_file(tmp_path: Path) -> None:
    history_in(tmp_path).add("list the streams")
    history_in(tmp_path).add("remove ORDERS")
    assert history_in(tmp_path).entries() == ["list the streams", "remove ORDERS"]


def test_the_default_file_is_under_the_xdg_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_history_path() == tmp_path / "fisk-ai" / "history" / "prompts.jsonl"


def test_a_multi_line_prompt_is_kept_whole(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    history.add("first line\n  second line\n\nlast line")
    assert history.entries() == ["first line\n  second line\n\nlast line"]


def test_a_prompt_sent_twice_in_a_row_is_kept_once(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    for prompt in ("status", "status", "restart", "status"):
        history.add(prompt)
    assert history.entries() == ["status", "restart", "status"]


def test_a_blank_prompt_is_not_kept(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    history.add("  \n ")
    assert history.entries() == []


def test_a_prompt_holding_an_api_key_is_not_kept(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    history.add("use the key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789abcdef to call it")
    history.add("list the streams")
    assert history.entries() == ["list the streams"]
    assert "sk-ant" not in history.path.read_text()


def test_the_file_is_private_in_a_private_directory(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    history.add("list the streams")
    assert stat.S_IMODE(history.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(history.path.parent.stat().st_mode) == 0o700


def test_a_file_others_could_read_is_made_private_on_the_next_prompt(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    history.add("first")
    history.path.chmod(0o644)
    history.path.parent.chmod(0o755)
    history.add("second")
    assert stat.S_IMODE(history.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(history.path.parent.stat().st_mode) == 0o700


def test_a_symlink_at_the_path_is_refused_and_its_target_left_alone(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    history.path.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere.txt"
    target.write_text("not yours\n")
    history.path.symlink_to(target)
    with pytest.raises(PromptHistoryError, match="symlink"):
        history.add("list the streams")
    with pytest.raises(PromptHistoryError, match="symlink"):
        history.entries()
    assert target.read_text() == "not yours\n"


def test_a_symlinked_directory_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "history").symlink_to(real)
    with pytest.raises(PromptHistoryError, match="symlink"):
        history_in(tmp_path).add("list the streams")
    assert list(real.iterdir()) == []


def test_a_corrupt_line_is_skipped(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    history.add("first")
    with history.path.open("ab") as file:
        file.write(b'{"prompt": "cut sho\n[1, 2]\n\xff\xfe\n{"prompt": 7}\n')
    history.add("second")
    assert history.entries() == ["first", "second"]


def test_a_prompt_after_a_line_cut_short_starts_a_line_of_its_own(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    history.add("first")
    with history.path.open("ab") as file:
        file.write(b'{"prompt": "cut sho')
    history.add("second")
    assert history.entries() == ["first", "second"]


def test_only_the_newest_prompts_up_to_the_limit_are_read(tmp_path: Path) -> None:
    history = history_in(tmp_path, limit=5)
    for number in range(8):
        history.add(f"prompt {number}")
    assert history.entries() == [f"prompt {number}" for number in range(3, 8)]


def test_the_file_is_cut_to_the_limit_once_it_passes_the_slack(tmp_path: Path) -> None:
    history = history_in(tmp_path, limit=5)
    for number in range(5 + COMPACTION_SLACK + 1):
        history.add(f"prompt {number}")
    lines = history.path.read_text().splitlines()
    assert [json.loads(line)["prompt"] for line in lines] == [
        f"prompt {number}" for number in range(COMPACTION_SLACK + 1, COMPACTION_SLACK + 6)
    ]
    assert stat.S_IMODE(history.path.stat().st_mode) == 0o600


def test_search_finds_any_case_newest_first_each_prompt_once(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    for prompt in ("restart NATS", "list streams", "Restart the broker", "restart NATS"):
        history.add(prompt)
    assert history.search("restart") == ["restart NATS", "Restart the broker"]


def test_an_empty_query_matches_every_prompt() -> None:
    assert matching_prompts(["a", "b"], "") == ["b", "a"]


WRITER = """
import sys
from pathlib import Path
from fisk_ai.tui.prompt_history import PromptHistory, holds_secret

history = PromptHistory(Path(sys.argv[1]), limit=int(sys.argv[3]))
holds_secret("")  # the secret checks are built before the start, not during the race
print("ready", flush=True)
sys.stdin.readline()
for number in range(int(sys.argv[4])):
    history.add(f"{sys.argv[2]} {number}")
"""


def run_two_writers(path: Path, *, limit: int, count: int) -> None:
    """Two processes adding ``count`` prompts each to ``path``, started together once both are
    ready, so their writes overlap."""
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name, str(limit), str(count)],
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("left", "right")
    ]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
    assert [writer.wait(timeout=DEADLINE) for writer in writers] == [0, 0]


def test_two_workstations_writing_at_once_lose_no_prompt(tmp_path: Path) -> None:
    history = history_in(tmp_path)
    run_two_writers(history.path, limit=HISTORY_LIMIT, count=300)
    entries = history.entries()
    assert sorted(entries) == sorted(
        f"{name} {number}" for name in ("left", "right") for number in range(300)
    )
    for name in ("left", "right"):
        assert [entry for entry in entries if entry.startswith(name)] == [
            f"{name} {number}" for number in range(300)
        ]


def test_two_workstations_compacting_at_once_keep_each_ones_newest_prompts(
    tmp_path: Path,
) -> None:
    history = history_in(tmp_path, limit=200)
    run_two_writers(history.path, limit=200, count=300)
    lines = history.path.read_text().splitlines()
    assert all(isinstance(json.loads(line)["prompt"], str) for line in lines)
    entries = history.entries()
    assert len(entries) == 200
    for name in ("left", "right"):
        numbers = [int(entry.split()[1]) for entry in entries if entry.startswith(name)]
        # What a compaction keeps of a writer is its newest prompts, none missing among them.
        assert numbers == list(range(300 - len(numbers), 300))
