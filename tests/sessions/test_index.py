"""The file store's session index: listings read one row per journal from ``.index.json`` and
re-read only the journals that changed behind it."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from fisk_ai.sessions import (
    FileSessionStore,
    Payload,
    Record,
    SessionStatus,
    Terminal,
    TerminalReason,
)
from fisk_ai.sessions.index import INDEX_NAME
from fisk_ai.sessions.records import encode_record
from tests.sessions.builders import meta, turn


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "runs"


@pytest.fixture
def store(directory: Path) -> FileSessionStore:
    return FileSessionStore(directory)


async def stored_session(
    store: FileSessionStore, run_id: str, *payloads: Payload, prompt: str = "hello"
) -> None:
    async with await store.create(run_id, meta(run_id, prompt)) as journal:
        for payload in payloads:
            await journal.append(payload)


def index_rows(directory: Path) -> dict[str, list[object]]:
    rows: dict[str, list[object]] = json.loads((directory / INDEX_NAME).read_text())["sessions"]
    return rows


def index_files(directory: Path) -> list[str]:
    """What the index left in the directory: its file, and no temporary one."""
    return sorted(path.name for path in directory.iterdir() if "index" in path.name)


def append_behind_the_store(path: Path, record: Record) -> None:
    """What an older build or another process does: append a line the index never hears of."""
    with path.open("ab") as journal:
        journal.write(encode_record(record) + b"\n")


async def test_a_listing_writes_the_index_and_the_next_reads_rows_from_it(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "orders", prompt="report on ORDERS")
    await store.list()
    # Edit the row while the journal stays as indexed: the listing must show the row, which
    # proves it did not read the journal.
    document = json.loads((directory / INDEX_NAME).read_text())
    document["sessions"]["orders"][5] = "from the index"  # the first prompt
    (directory / INDEX_NAME).write_text(json.dumps(document))

    [summary] = await store.list()

    assert summary.first_prompt == "from the index"


async def test_a_journal_changed_behind_the_index_is_read_again(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "orders", turn(1), prompt="report on ORDERS")
    [before] = await store.list()
    append_behind_the_store(directory / "orders.json", Record(3, Terminal(TerminalReason.ERROR)))

    [after] = await store.list()

    assert before.status is SessionStatus.OPEN
    assert after.status is SessionStatus.ERROR
    assert index_rows(directory)["orders"][2] == "error"  # the status


async def test_an_append_through_the_store_shows_in_the_next_listing(
    store: FileSessionStore,
) -> None:
    await stored_session(store, "orders", turn(1))
    await store.list()
    async with await store.open("orders") as journal:
        await journal.append(Terminal(TerminalReason.COMPLETED))

    [summary] = await store.list()

    assert summary.status is SessionStatus.COMPLETED


async def test_a_corrupt_journal_lists_as_corrupt_from_the_index_too(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "good")
    await stored_session(store, "bad", turn(1), turn(2), prompt="broken one")
    path = directory / "bad.json"
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join([lines[0], b"garbage", lines[2]]) + b"\n")

    first = {summary.run_id: summary for summary in await store.list()}
    again = {summary.run_id: summary for summary in await store.list()}

    for listing in (first, again):
        assert listing["good"].status is SessionStatus.OPEN
        assert listing["bad"].status is SessionStatus.CORRUPT
        assert "line 2 is corrupt" in listing["bad"].problem


async def test_removing_a_session_drops_its_row(store: FileSessionStore, directory: Path) -> None:
    await stored_session(store, "keep")
    await stored_session(store, "drop")
    await store.list()

    await store.remove("drop")

    assert set(index_rows(directory)) == {"keep"}
    assert [summary.run_id for summary in await store.list()] == ["keep"]


async def test_a_journal_deleted_behind_the_index_leaves_the_listing(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "keep")
    await stored_session(store, "gone")
    await store.list()
    (directory / "gone.json").unlink()

    assert [summary.run_id for summary in await store.list()] == ["keep"]
    assert set(index_rows(directory)) == {"keep"}


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"version": 0, "sessions": {}}'])
async def test_an_index_that_cannot_be_read_is_rebuilt(
    store: FileSessionStore, directory: Path, content: bytes
) -> None:
    await stored_session(store, "orders", prompt="report on ORDERS")
    (directory / INDEX_NAME).write_bytes(content)

    [summary] = await store.list()

    assert summary.first_prompt == "report on ORDERS"
    assert set(index_rows(directory)) == {"orders"}


async def test_a_row_of_the_wrong_shape_is_read_again_from_its_journal(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "orders", prompt="report on ORDERS")
    await store.list()
    document = json.loads((directory / INDEX_NAME).read_text())
    document["sessions"]["orders"][3] = 42  # the model, not text
    (directory / INDEX_NAME).write_text(json.dumps(document))

    [summary] = await store.list()

    assert (summary.model, summary.first_prompt) == ("claude-sonnet", "report on ORDERS")
    assert index_rows(directory)["orders"][3] == "claude-sonnet"


async def test_the_index_is_private_and_never_listed_as_a_session(
    store: FileSessionStore, directory: Path
) -> None:
    await stored_session(store, "orders")
    await store.list()

    assert (directory / INDEX_NAME).stat().st_mode & 0o777 == 0o600
    assert [summary.run_id for summary in await store.list()] == ["orders"]
    assert index_files(directory) == [INDEX_NAME]


def write_journals(directory: Path, count: int) -> None:
    """``count`` one-record journals, s00000 the oldest, written directly for speed."""
    directory.mkdir(parents=True, mode=0o700)
    for number in range(count):
        run_id = f"s{number:05d}"
        path = directory / f"{run_id}.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, encode_record(Record(1, meta(run_id, f"prompt {number}"))) + b"\n")
        os.close(fd)
        os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))


async def test_five_thousand_sessions_list_correctly_from_the_index(
    store: FileSessionStore, directory: Path
) -> None:
    write_journals(directory, 5000)

    fresh = await store.list()
    indexed = await store.list()
    append_behind_the_store(directory / "s00042.json", Record(2, turn(1)))
    (directory / "s04999.json").unlink()
    after = await store.list()

    assert indexed == fresh
    assert len(fresh) == 5000
    assert fresh[0].run_id == "s04999"
    assert fresh[-1].run_id == "s00000"
    assert all(summary.first_prompt == f"prompt {int(summary.run_id[1:])}" for summary in fresh)
    assert len(after) == 4999
    assert after[0].run_id == "s00042"  # appended just now, so the newest


async def test_two_stores_listing_and_writing_at_once_stay_right(directory: Path) -> None:
    """Two processes share the directory; each keeps the index whole and every listing true."""
    one, other = FileSessionStore(directory), FileSessionStore(directory)
    for number in range(20):
        await stored_session(one, f"s{number:02d}")

    async def finish_all() -> None:
        for number in range(20):
            async with await other.open(f"s{number:02d}") as journal:
                await journal.append(Terminal(TerminalReason.COMPLETED))
            await other.list()

    async def list_repeatedly() -> None:
        for _ in range(20):
            assert len(await one.list()) == 20

    await asyncio.gather(finish_all(), list_repeatedly())

    assert {summary.status for summary in await one.list()} == {SessionStatus.COMPLETED}
    assert len(index_rows(directory)) == 20


async def test_a_symlink_in_place_of_the_index_is_not_followed(
    store: FileSessionStore, directory: Path, tmp_path: Path
) -> None:
    await stored_session(store, "orders", prompt="report on ORDERS")
    await store.list()
    planted = tmp_path / "planted.json"
    document = json.loads((directory / INDEX_NAME).read_text())
    document["sessions"]["orders"][5] = "planted prompt"
    planted.write_text(json.dumps(document))
    (directory / INDEX_NAME).unlink()
    (directory / INDEX_NAME).symlink_to(planted)

    [summary] = await store.list()

    assert summary.first_prompt == "report on ORDERS"
    assert not (directory / INDEX_NAME).is_symlink()
    assert "planted prompt" in planted.read_text()


@pytest.mark.parametrize("status", ["paused-forever", ["completed"], None])
async def test_a_row_with_a_status_this_build_does_not_know_is_read_again(
    store: FileSessionStore, directory: Path, status: object
) -> None:
    await stored_session(store, "orders", prompt="report on ORDERS")
    await store.list()
    document = json.loads((directory / INDEX_NAME).read_text())
    document["sessions"]["orders"][2] = status
    (directory / INDEX_NAME).write_text(json.dumps(document))

    [summary] = await store.list()

    assert summary.status is SessionStatus.OPEN
    assert index_rows(directory)["orders"][2] == SessionStatus.OPEN.value
