"""The file memory backend: the shared contract, plus modes, symlinks, planted files and the
stored format."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from fisk_ai.memory import MemoryStore, MemoryStoreError, Scope, lookup_backend
from fisk_ai.memory.file import FileMemoryStore
from tests.memory.contract import MakeStore, MemoryStoreContract


class TestFileStoreContract(MemoryStoreContract):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> MakeStore:
        async def make() -> MemoryStore:
            return FileMemoryStore(tmp_path / "memory" / "ops")

        return make


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def plant(
    directory: Path,
    name: str,
    text: str = "",
    *,
    link_to: Path | None = None,
    mode: int | None = None,
) -> Path:
    """A file put in the memory directory by hand, or a symlink to ``link_to``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    if link_to is not None:
        path.symlink_to(link_to)
    else:
        path.write_text(text)
    if mode is not None:
        path.chmod(mode)
    return path


def loosen(directory: Path) -> None:
    directory.chmod(0o755)


def names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "memory" / "ops"


@pytest.fixture
def store(directory: Path) -> FileMemoryStore:
    return FileMemoryStore(directory)


async def test_the_directory_is_0700_and_each_memory_0600(
    store: FileMemoryStore, directory: Path
) -> None:
    old_umask = os.umask(0)
    try:
        await store.create("build.notes", "d", "c")
    finally:
        os.umask(old_umask)

    assert mode(directory) == 0o700
    assert mode(directory / "build.notes.md") == 0o600


async def test_loose_modes_are_restricted_again(store: FileMemoryStore, directory: Path) -> None:
    planted = plant(directory, "k.md", "hand written", mode=0o644)
    loosen(directory)

    await store.create("other", "d", "c")
    await store.read("k")

    assert mode(directory) == 0o700
    assert mode(planted) == 0o600


async def test_the_stored_file_is_the_shared_format(
    store: FileMemoryStore, directory: Path
) -> None:
    await store.create("k", "Notes: the build", "body\n")

    assert (directory / "k.md").read_bytes() == (
        b"---\ndescription: 'Notes: the build'\n---\n\nbody\n"
    )


async def test_a_file_without_a_header_reads_as_all_body(
    store: FileMemoryStore, directory: Path
) -> None:
    plant(directory, "k.md", "just text\n")

    memory = await store.read("k")

    assert memory is not None and (memory.description, memory.content) == ("", "just text\n")


async def test_a_symlinked_directory_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    store = FileMemoryStore(link)

    with pytest.raises(MemoryStoreError, match="is a symlink, which is refused"):
        await store.list()
    with pytest.raises(MemoryStoreError, match=r"harness\.memory\.options\.directory"):
        await store.create("k", "d", "c")
    assert list(real.iterdir()) == []


async def test_a_symlinked_memory_is_never_followed(
    store: FileMemoryStore, directory: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read me")
    plant(directory, "k.md", link_to=secret)

    with pytest.raises(MemoryStoreError, match="symlink"):
        await store.read("k")
    with pytest.raises(MemoryStoreError, match="symlink"):
        await store.update("k", "d", "overwritten", Scope())
    with pytest.raises(MemoryStoreError, match="symlink"):
        await store.delete("k")
    with pytest.raises(MemoryStoreError):
        await store.create("k", "d", "c")
    assert secret.read_text() == "do not read me"
    assert await store.list() == []


async def test_planted_files_with_illegal_names_stay_invisible(
    store: FileMemoryStore, directory: Path
) -> None:
    await store.create("good", "d", "c")
    for name in ("bad name.md", ".hidden.md", "a..b.md", "trailing..md", "notes.txt"):
        (directory / name).write_text("planted")
    (directory / "dir.md").mkdir()
    (directory / ".memtmp-abc").write_text("a write in progress")

    assert [item.key for item in await store.list()] == ["good"]


async def test_a_write_leaves_no_temp_file(store: FileMemoryStore, directory: Path) -> None:
    await store.create("k", "d", "c")
    scope = Scope()
    await store.update("k", "d", "c2", scope)
    with pytest.raises(MemoryStoreError):
        await store.create("k", "d", "c3")

    assert names(directory) == ["k.md"]


async def test_an_overwrite_of_nothing_adds_the_memory(store: FileMemoryStore) -> None:
    # The file backend keeps no revisions, so it cannot require a read before an overwrite.
    await store.update("k", "d", "blind", None)

    memory = await store.read("k")
    assert memory is not None and memory.content == "blind" and memory.revision is None


async def test_info_carries_no_path(store: FileMemoryStore) -> None:
    info = store.info()
    assert (info.backend, info.location) == ("file", "")


def test_the_registry_resolves_the_file_backend(tmp_path: Path) -> None:
    store = lookup_backend("file")(directory=tmp_path)
    assert isinstance(store, FileMemoryStore) and store.directory == tmp_path


def test_an_unknown_backend_names_the_key() -> None:
    with pytest.raises(MemoryStoreError, match=r"harness.memory.backend 'redis'.*file, jetstream"):
        lookup_backend("redis")
