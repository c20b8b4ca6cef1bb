"""Planted memory files and values (a YAML alias bomb, a FIFO, a file grown past any write) never
hang, exhaust or crash a read (issue 25, items 4 and 5), and a stored value is read as Go reads
it (issue 24, item 7)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from fisk_ai.memory import MemoryStoreError
from fisk_ai.memory.file import FileMemoryStore
from fisk_ai.memory.store import MAX_ENTRY_BYTES, Item, parse

LEVELS = "abcdefghi"
ALIAS_BOMB = (
    "---\ndescription: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
        for previous, name in itertools.pairwise(LEVELS)
    )
    + "---\n\nbody\n"
)


def _memory_directory(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    directory.mkdir(mode=0o700)
    return directory


def _plant(directory: Path, key: str, data: bytes) -> None:
    path = directory / f"{key}.md"
    path.write_bytes(data)
    path.chmod(0o600)


def test_the_alias_bomb_is_small() -> None:
    assert len(ALIAS_BOMB) < 500


async def test_a_planted_alias_bomb_reads_as_a_note_without_a_description(
    tmp_path: Path,
) -> None:
    directory = _memory_directory(tmp_path)
    _plant(directory, "bomb", ALIAS_BOMB.encode())
    store = FileMemoryStore(directory)

    assert await store.list() == [Item("bomb", "")]
    memory = await store.read("bomb")
    assert memory is not None and memory.content == ALIAS_BOMB


async def test_a_fifo_at_a_memory_path_is_refused_without_waiting(tmp_path: Path) -> None:
    directory = _memory_directory(tmp_path)
    os.mkfifo(directory / "pipe.md", 0o600)
    store = FileMemoryStore(directory)

    with pytest.raises(MemoryStoreError, match="not a regular file"):
        await store.read("pipe")
    assert await store.list() == []


async def test_a_huge_note_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    directory = _memory_directory(tmp_path)
    header = b"---\ndescription: big\n---\n\n"
    _plant(directory, "big", header + b"x" * (20 * 1024 * 1024))

    memory = await FileMemoryStore(directory).read("big")

    assert memory is not None and memory.description == "big"
    assert len(memory.content) == MAX_ENTRY_BYTES - len(header)


def test_a_header_closed_at_the_end_of_the_value_has_an_empty_body_as_in_go() -> None:
    assert parse(b"---\ndescription: only a header\n---") == ("only a header", "")


def test_a_fence_straight_after_the_opening_one_is_not_an_empty_header_as_in_go() -> None:
    assert parse(b"---\n---\nbody\n") == ("", "---\n---\nbody\n")


def test_a_description_that_is_not_text_leaves_the_value_as_body_as_in_go() -> None:
    value = b"---\ndescription: [a, b]\n---\n\nbody\n"
    assert parse(value) == ("", value.decode())
