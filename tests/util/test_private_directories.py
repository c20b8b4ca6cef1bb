"""Every directory fisk creates is 0700 whatever the umask: the parents it creates on the way
(a state directory, ``knowledge/``, ``memory/``) as well as the store's own directory."""

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from fisk_ai.knowledge.store import KnowledgeWriter
from fisk_ai.memory.file import FileMemoryStore
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tui.prompt_history import PromptHistory
from fisk_ai.util.fsx import make_private_directories


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes_below(root: Path, leaf: Path) -> dict[str, int]:
    """The mode of each directory from just under ``root`` down to ``leaf``."""
    found = {}
    current = leaf
    while current != root:
        found[str(current.relative_to(root))] = mode(current)
        current = current.parent
    return found


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("open_umask")
def test_each_directory_created_is_0700_under_umask_000(tmp_path: Path) -> None:
    leaf = tmp_path / "state" / "data" / "sessions"
    make_private_directories(leaf)
    assert set(modes_below(tmp_path, leaf).values()) == {0o700}


def test_a_umask_clearing_owner_bits_still_gives_0700(tmp_path: Path) -> None:
    previous = os.umask(0o700)
    try:
        make_private_directories(tmp_path / "a" / "b")
    finally:
        os.umask(previous)
    assert modes_below(tmp_path, tmp_path / "a" / "b") == {"a/b": 0o700, "a": 0o700}


@pytest.mark.usefixtures("open_umask")
def test_a_directory_that_exists_keeps_its_mode(tmp_path: Path) -> None:
    existing = tmp_path / "shared"
    existing.mkdir()
    existing.chmod(0o755)
    make_private_directories(existing / "mine")
    assert mode(existing) == 0o755
    assert mode(existing / "mine") == 0o700


def test_a_file_in_the_way_is_refused_as_mkdir_refuses_it(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("not a directory")
    with pytest.raises(FileExistsError):
        make_private_directories(tmp_path / "taken")


@pytest.mark.usefixtures("open_umask")
def test_the_session_store_creates_its_parents_0700(tmp_path: Path) -> None:
    directory = tmp_path / "state" / "sessions"
    FileSessionStore(directory).lease("r1", "test").release()
    assert set(modes_below(tmp_path, directory).values()) == {0o700}


@pytest.mark.usefixtures("open_umask")
async def test_the_memory_store_creates_its_parents_0700(tmp_path: Path) -> None:
    directory = tmp_path / "data" / "memory" / "ops"
    await FileMemoryStore(directory).create("notes", "d", "c")
    assert set(modes_below(tmp_path, directory).values()) == {0o700}


@pytest.mark.usefixtures("open_umask")
def test_the_knowledge_store_creates_its_parents_0700(tmp_path: Path) -> None:
    directory = tmp_path / "data" / "knowledge" / "docs"
    with KnowledgeWriter(directory):
        pass
    assert set(modes_below(tmp_path, directory).values()) == {0o700}


@pytest.mark.usefixtures("open_umask")
def test_the_prompt_history_creates_its_parents_0700(tmp_path: Path) -> None:
    path = tmp_path / "state" / "fisk-ai" / "history"
    PromptHistory(path).add("hello")
    assert set(modes_below(tmp_path, path.parent).values()) == {0o700}
