from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import threading
from datetime import datetime
from pathlib import Path

import pytest

from fisk_ai.sessions import (
    AppendAction,
    Decision,
    FileJournal,
    FileSessionStore,
    InvalidSessionId,
    JournalError,
    JournalGapError,
    JournalLocked,
    MemoryRevisions,
    Payload,
    Record,
    SessionError,
    SessionExists,
    SessionNotFound,
    SessionStatus,
    Terminal,
    TerminalReason,
    decode_record,
    default_state_directory,
    fold,
)
from fisk_ai.sessions import file as file_backend
from tests.patience import DEADLINE
from tests.sessions.builders import meta, result, turn


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "state" / "runs"


@pytest.fixture
def store(directory: Path) -> FileSessionStore:
    return FileSessionStore(directory)


async def stored_session(
    store: FileSessionStore, run_id: str, *payloads: Payload, prompt: str = "hello"
) -> None:
    async with await store.create(run_id, meta(run_id, prompt)) as journal:
        for payload in payloads:
            await journal.append(payload)


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def inode_of(path: Path) -> int:
    return path.stat().st_ino


def loosen(path: Path, mode: int) -> None:
    path.chmod(mode)


def names_in(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


async def test_a_new_journal_holds_its_meta_record_as_line_one(
    store: FileSessionStore, directory: Path
) -> None:
    async with await store.create("run-1", meta("run-1")) as journal:
        assert journal.last_seq == 1

    assert [decode_record(line) for line in lines_of(directory / "run-1.json")] == [
        Record(1, meta("run-1"))
    ]


async def test_each_record_is_one_line_numbered_in_order(
    store: FileSessionStore, directory: Path
) -> None:
    async with await store.create("run-1", meta("run-1")) as journal:
        first = await journal.append(turn(1, "a"))
        second = await journal.append(result("a"))
        assert journal.last_seq == 3

    assert (first.seq, second.seq) == (2, 3)
    content = (directory / "run-1.json").read_bytes()
    assert content.endswith(b"\n")
    assert [decode_record(line).seq for line in content.splitlines()] == [1, 2, 3]


async def test_every_record_is_fsynced_and_the_directory_once_on_creation(
    store: FileSessionStore, directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(os.fstat(fd).st_ino)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    journal = await store.create("run-1", meta("run-1"))
    journal_inode = inode_of(directory / "run-1.json")
    directory_inode = inode_of(directory)
    assert synced == [journal_inode, directory_inode]

    await journal.append(turn(1))
    await journal.append(Terminal(TerminalReason.COMPLETED))
    await journal.close()

    assert synced == [journal_inode, directory_inode, journal_inode, journal_inode]


async def test_a_slow_sync_moves_the_journals_next_append_off_the_event_loop(
    store: FileSessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    syncing_threads: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        syncing_threads.append(threading.get_ident())
        real_fsync(fd)

    journal = await store.create("run-1", meta("run-1"))
    monkeypatch.setattr(os, "fsync", recording_fsync)
    # Every sync now counts as slow: the first append is still made on the loop, the next not.
    monkeypatch.setattr(file_backend, "INLINE_SYNC_LIMIT", -1.0)
    await journal.append(turn(1))
    await journal.append(turn(2))
    await journal.close()

    loop_thread = threading.get_ident()
    assert syncing_threads[0] == loop_thread
    assert syncing_threads[1] != loop_thread
    assert [record.seq for record in await store.read("run-1")] == [1, 2, 3]


async def test_a_cancel_while_a_thread_writes_a_record_waits_for_it_and_the_next_follows_it(
    store: FileSessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stop cancels a turn wherever it is, a slow disk's append included; the record its thread
    # goes on writing must count, or the next append (the resting record as the runner closes)
    # would reuse its sequence number, or write into the middle of its line.
    syncing, resumed = threading.Event(), threading.Event()
    real_fsync = os.fsync

    def held_fsync(fd: int) -> None:
        if threading.current_thread() is not threading.main_thread():
            syncing.set()
            resumed.wait(DEADLINE)
        real_fsync(fd)

    journal = await store.create("run-1", meta("run-1"))
    monkeypatch.setattr(os, "fsync", held_fsync)
    monkeypatch.setattr(file_backend, "INLINE_SYNC_LIMIT", -1.0)
    await journal.append(turn(1))
    appending = asyncio.create_task(journal.append(turn(2)))
    assert await asyncio.to_thread(syncing.wait, DEADLINE)
    appending.cancel()
    resumed.set()
    with pytest.raises(asyncio.CancelledError):
        await appending
    await journal.append(turn(3))
    await journal.close()

    assert journal.last_seq == 4
    assert [record.seq for record in await store.read("run-1")] == [1, 2, 3, 4]


async def test_files_are_0600_in_a_0700_directory(store: FileSessionStore, directory: Path) -> None:
    await stored_session(store, "run-1")

    assert mode_of(directory) == 0o700
    assert mode_of(directory / "run-1.json") == 0o600
    assert mode_of(directory / "run-1.lock") == 0o600


async def test_looser_modes_are_tightened_on_open(store: FileSessionStore, directory: Path) -> None:
    await stored_session(store, "run-1")
    loosen(directory, 0o755)
    loosen(directory / "run-1.json", 0o644)
    loosen(directory / "run-1.lock", 0o666)

    await (await store.open("run-1")).close()

    assert mode_of(directory) == 0o700
    assert mode_of(directory / "run-1.json") == 0o600
    assert mode_of(directory / "run-1.lock") == 0o600


async def test_a_symlinked_directory_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "runs").symlink_to(real)
    store = FileSessionStore(tmp_path / "runs")

    with pytest.raises(SessionError, match="is a symlink"):
        await store.create("run-1", meta("run-1"))
    assert list(real.iterdir()) == []


async def test_a_symlinked_journal_is_refused(store: FileSessionStore, directory: Path) -> None:
    await stored_session(store, "real")
    (directory / "run-1.json").symlink_to(directory / "real.json")

    with pytest.raises(SessionError, match="is a symlink"):
        await store.read("run-1")
    with pytest.raises(SessionError, match="is a symlink"):
        await store.open("run-1")


async def test_a_symlinked_lock_is_refused(
    store: FileSessionStore, directory: Path, tmp_path: Path
) -> None:
    await stored_session(store, "run-1")
    (directory / "run-1.lock").unlink()
    (directory / "run-1.lock").symlink_to(tmp_path / "elsewhere")

    with pytest.raises(SessionError, match="is a symlink"):
        await store.open("run-1")
    assert not (tmp_path / "elsewhere").exists()


async def test_a_torn_final_line_is_dropped_on_read(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "run-1", turn(1))
    with (directory / "run-1.json").open("ab") as journal_file:
        journal_file.write(b'{"seq":3,"protocol":"io.choria.fisk-')

    records = await store.read("run-1")

    assert [record.seq for record in records] == [1, 2]


async def test_a_torn_final_line_is_cut_off_before_the_next_append(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "run-1", turn(1))
    with (directory / "run-1.json").open("ab") as journal_file:
        journal_file.write(b'{"seq":3,"protocol":"io.choria.fisk-')

    async with await store.open("run-1") as journal:
        assert journal.last_seq == 2
        await journal.append(Terminal(TerminalReason.COMPLETED))

    assert [decode_record(line).seq for line in lines_of(directory / "run-1.json")] == [1, 2, 3]


async def test_a_final_record_missing_only_its_newline_is_kept(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "run-1", turn(1))
    path = directory / "run-1.json"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))

    async with await store.open("run-1") as journal:
        await journal.append(Terminal(TerminalReason.COMPLETED))

    assert [decode_record(line).seq for line in lines_of(path)] == [1, 2, 3]


async def test_an_interior_line_that_does_not_parse_is_corruption_naming_the_line(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "run-1", turn(1), Terminal(TerminalReason.COMPLETED))
    path = directory / "run-1.json"
    lines = lines_of(path)
    lines[1] = lines[1][:20]
    path.write_bytes(b"\n".join(lines) + b"\n")

    with pytest.raises(JournalError, match=rf"{path} line 2 is corrupt"):
        await store.read("run-1")
    with pytest.raises(JournalError, match="line 2"):
        await store.open("run-1")


async def test_a_final_line_that_parses_but_is_malformed_is_corruption(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "run-1")
    with (directory / "run-1.json").open("ab") as journal_file:
        journal_file.write(b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.decision"}\n')

    with pytest.raises(JournalError, match="line 2 is corrupt: record 2 lacks its decision"):
        await store.read("run-1")


async def test_a_second_process_cannot_open_a_held_session(store: FileSessionStore) -> None:
    await stored_session(store, "run-1")

    async with await store.open("run-1"):
        refused = await in_another_process("try", store.directory, "run-1")
    allowed = await in_another_process("try", store.directory, "run-1")

    assert refused.startswith("JournalLocked: session run-1 is in use by another fisk process")
    assert allowed == "opened"


async def test_a_writer_that_dies_leaves_no_stale_lock(store: FileSessionStore) -> None:
    await stored_session(store, "run-1")
    holder = await start_in_another_process("hold", store.directory, "run-1")
    assert holder.stdout is not None and holder.stdin is not None
    assert (await holder.stdout.readline()).strip() == b"holding"

    with pytest.raises(JournalLocked, match="session run-1 is in use"):
        await store.open("run-1")

    holder.stdin.write(b"die\n")
    await holder.stdin.drain()
    await holder.wait()
    await (await store.open("run-1")).close()


async def test_the_same_process_cannot_open_a_session_twice(store: FileSessionStore) -> None:
    await stored_session(store, "run-1")

    async with await store.open("run-1"):
        with pytest.raises(JournalLocked):
            await store.open("run-1")


async def test_append_record_writes_the_next_skips_a_duplicate_and_refuses_a_gap(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "run-1", turn(1))

    async with await store.open("run-1") as journal:
        written = await journal.append_record(Record(3, Decision("stream_rm")))
        skipped = await journal.append_record(Record(2, Decision("ignored")))
        with pytest.raises(JournalGapError):
            await journal.append_record(Record(5, Decision("too far")))
        assert journal.last_seq == 3

    assert (written, skipped) == (AppendAction.WRITE, AppendAction.SKIP)
    assert [decode_record(line).payload for line in lines_of(directory / "run-1.json")][2:] == [
        Decision("stream_rm")
    ]


async def test_memory_revisions_are_appended_as_optional(store: FileSessionStore) -> None:
    async with await store.create("run-1", meta("run-1")) as journal:
        record = await journal.append(MemoryRevisions({"k": 1}))

    assert record.optional
    assert (await store.read("run-1"))[-1].optional


async def test_a_closed_journal_takes_no_more_records(store: FileSessionStore) -> None:
    journal = await store.create("run-1", meta("run-1"))
    await journal.close()
    await journal.close()

    with pytest.raises(SessionError, match="was closed"):
        await journal.append(turn(1))
    assert journal.last_seq == 1


async def test_creating_a_session_that_exists_is_refused(store: FileSessionStore) -> None:
    await stored_session(store, "run-1")

    with pytest.raises(SessionExists, match="session run-1 already exists"):
        await store.create("run-1", meta("run-1"))


async def test_a_missing_session_is_not_found(store: FileSessionStore, directory: Path) -> None:
    await stored_session(store, "run-1")

    with pytest.raises(SessionNotFound, match="no session run-2"):
        await store.read("run-2")
    with pytest.raises(SessionNotFound):
        await store.open("run-2")
    assert not (directory / "run-2.lock").exists()


async def test_reading_from_a_directory_never_made_is_not_found(store: FileSessionStore) -> None:
    with pytest.raises(SessionNotFound):
        await store.read("run-1")


@pytest.mark.parametrize("run_id", ["", "-leading-dash", "../escape", "a b", "a.b", "x" * 129])
async def test_an_invalid_session_id_is_refused(store: FileSessionStore, run_id: str) -> None:
    with pytest.raises(InvalidSessionId, match="not a valid session id"):
        await store.read(run_id)


async def test_the_longest_valid_session_id_is_accepted(store: FileSessionStore) -> None:
    run_id = "x" * 128

    await stored_session(store, run_id)

    assert len(await store.read(run_id)) == 1


async def test_the_listing_folds_every_session_newest_first(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "older", turn(1), Terminal(TerminalReason.COMPLETED), prompt="a")
    await stored_session(store, "newer", turn(1), prompt="b")
    os.utime(directory / "older.json", (1_700_000_000, 1_700_000_000))
    os.utime(directory / "newer.json", (1_800_000_000, 1_800_000_000))

    listing = await store.list()

    assert [(s.run_id, s.status, s.model, s.first_prompt) for s in listing] == [
        ("newer", SessionStatus.OPEN, "claude-sonnet", "b"),
        ("older", SessionStatus.COMPLETED, "claude-sonnet", "a"),
    ]
    assert listing[1].updated == datetime.fromtimestamp(1_700_000_000).astimezone()


async def test_a_corrupt_journal_is_listed_as_corrupt(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "good")
    await stored_session(store, "bad", turn(1), turn(2), prompt="broken one")
    path = directory / "bad.json"
    lines = lines_of(path)
    path.write_bytes(b"\n".join([lines[0], b"garbage", lines[2]]) + b"\n")

    listing = {summary.run_id: summary for summary in await store.list()}

    assert listing["good"].status is SessionStatus.OPEN
    assert listing["bad"].status is SessionStatus.CORRUPT
    assert "line 2 is corrupt" in listing["bad"].problem


async def test_a_journal_that_does_not_fold_is_listed_as_corrupt_with_its_model(
    store: FileSessionStore,
) -> None:
    await stored_session(store, "bad", result("nobody-asked"), prompt="orphan result")

    [summary] = await store.list()

    assert summary.status is SessionStatus.CORRUPT
    assert (summary.model, summary.first_prompt) == ("claude-sonnet", "orphan result")


async def test_listing_a_directory_never_made_is_empty(store: FileSessionStore) -> None:
    assert await store.list() == []


async def test_removal_deletes_the_journal_and_its_lock(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "run-1")
    await stored_session(store, "run-2")

    await store.remove("run-1")

    assert names_in(directory) == ["run-2.json", "run-2.lock"]
    with pytest.raises(SessionNotFound):
        await store.read("run-1")


async def test_a_held_session_cannot_be_removed(store: FileSessionStore, directory: Path) -> None:
    await stored_session(store, "run-1")

    async with await store.open("run-1"):
        with pytest.raises(JournalLocked):
            await store.remove("run-1")
    assert (directory / "run-1.json").exists()


async def test_removing_a_missing_session_is_not_found(store: FileSessionStore) -> None:
    await stored_session(store, "run-1")

    with pytest.raises(SessionNotFound):
        await store.remove("run-2")


async def test_a_reopened_journal_continues_the_sequence(store: FileSessionStore) -> None:
    await stored_session(store, "run-1", turn(1, "a"))

    async with await store.open("run-1") as journal:
        assert journal.last_seq == 2
        await journal.append(result("a"))

    conversation = fold(await store.read("run-1"))
    assert conversation.last_seq == 3
    assert conversation.tool_calls == 1


def test_describe_names_the_directory(store: FileSessionStore, directory: Path) -> None:
    assert str(directory) in store.describe()


def test_the_default_directory_follows_xdg_state_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))

    assert default_state_directory() == tmp_path / "fisk-ai" / "runs"


def test_a_relative_xdg_state_home_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")

    assert default_state_directory() == Path.home() / ".local" / "state" / "fisk-ai" / "runs"


async def test_the_journal_is_named_for_its_session(store: FileSessionStore) -> None:
    async with await store.create("run-1", meta("run-1")) as journal:
        assert isinstance(journal, FileJournal)
        assert journal.path == store.directory / "run-1.json"

    assert json.loads(journal.path.read_bytes())["meta"]["run_id"] == "run-1"


_CHILD = """
import asyncio, os, sys
from fisk_ai.sessions import FileSessionStore, JournalLocked

async def main(mode, directory, run_id):
    store = FileSessionStore(directory)
    if mode == "try":
        try:
            journal = await store.open(run_id)
        except JournalLocked as refused:
            print(f"JournalLocked: {refused}", flush=True)
            return
        print("opened", flush=True)
        await journal.close()
    else:
        await store.open(run_id)
        print("holding", flush=True)
        sys.stdin.readline()
        os._exit(0)  # no close: the kernel must release the lock, as after a crash

asyncio.run(main(*sys.argv[1:]))
"""


async def start_in_another_process(
    mode: str, directory: Path, run_id: str
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _CHILD,
        mode,
        str(directory),
        run_id,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


async def in_another_process(mode: str, directory: Path, run_id: str) -> str:
    child = await start_in_another_process(mode, directory, run_id)
    output, _ = await child.communicate()
    assert child.returncode == 0
    return output.decode().strip()
