"""The contract every memory backend keeps. A backend's test module subclasses
``MemoryStoreContract`` and provides ``make_store``: a maker of stores over one backing store,
so a test can have two independent writers share it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from fisk_ai.memory import (
    MAX_CONTENT_BYTES,
    InvalidMemory,
    Item,
    MemoryExists,
    MemoryFull,
    MemoryStore,
    Scope,
)

MakeStore = Callable[[], Awaitable[MemoryStore]]

BAD_KEYS = [
    "",
    ".hidden",
    "trailing.",
    "a..b",
    "notes/build",
    "../escape",
    "with space",
    "tab\tkey",
    "x" * 201,
]


class MemoryStoreContract:
    async def test_an_empty_store_lists_nothing_and_reads_nothing(
        self, make_store: MakeStore
    ) -> None:
        store = await make_store()
        assert await store.list() == []
        assert await store.read("build.notes") is None

    async def test_a_created_memory_reads_back_whole(self, make_store: MakeStore) -> None:
        store = await make_store()
        await store.create("build.notes", "How the build works", "make all\nthen make test\n")

        memory = await store.read("build.notes")

        assert memory is not None
        assert (memory.key, memory.description, memory.content) == (
            "build.notes",
            "How the build works",
            "make all\nthen make test\n",
        )

    async def test_list_gives_keys_and_descriptions_sorted_by_key(
        self, make_store: MakeStore
    ) -> None:
        store = await make_store()
        for key in ("zeta", "alpha", "mid=1"):
            await store.create(key, f"about {key}", "body")

        assert await store.list() == [
            Item("alpha", "about alpha"),
            Item("mid=1", "about mid=1"),
            Item("zeta", "about zeta"),
        ]

    async def test_a_create_of_a_taken_key_is_refused(self, make_store: MakeStore) -> None:
        store = await make_store()
        await store.create("k", "first", "one")

        with pytest.raises(MemoryExists, match="'k'"):
            await store.create("k", "second", "two")
        memory = await store.read("k")
        assert memory is not None and memory.content == "one"

    async def test_two_writers_racing_for_a_new_key_leave_exactly_one(
        self, make_store: MakeStore
    ) -> None:
        first, second = await make_store(), await make_store()

        outcomes = await asyncio.gather(
            first.create("race", "from the first", "1"),
            second.create("race", "from the second", "2"),
            return_exceptions=True,
        )

        assert sorted(type(outcome).__name__ for outcome in outcomes) == [
            "MemoryExists",
            "NoneType",
        ]
        assert len(await first.list()) == 1

    async def test_an_update_after_a_read_replaces_the_memory(self, make_store: MakeStore) -> None:
        store = await make_store()
        await store.create("k", "old", "old body")
        scope = Scope()
        await store.read("k", scope)

        await store.update("k", "new", "new body", scope)

        memory = await store.read("k")
        assert memory is not None and (memory.description, memory.content) == ("new", "new body")

    async def test_the_writer_of_a_memory_may_update_it_without_reading(
        self, make_store: MakeStore
    ) -> None:
        store = await make_store()
        scope = Scope()
        await store.create("k", "mine", "v1", scope)

        await store.update("k", "mine", "v2", scope)
        await store.update("k", "mine", "v3", scope)

        memory = await store.read("k")
        assert memory is not None and memory.content == "v3"

    async def test_delete_says_whether_there_was_a_memory(self, make_store: MakeStore) -> None:
        store = await make_store()
        await store.create("k", "d", "c")

        assert await store.delete("k") is True
        assert await store.delete("k") is False
        assert await store.read("k") is None
        assert await store.list() == []

    async def test_a_deleted_key_can_be_created_again(self, make_store: MakeStore) -> None:
        store = await make_store()
        await store.create("k", "d", "first")
        await store.delete("k")

        await store.create("k", "d", "second")

        memory = await store.read("k")
        assert memory is not None and memory.content == "second"

    @pytest.mark.parametrize("key", BAD_KEYS)
    async def test_every_method_refuses_an_invalid_key(
        self, make_store: MakeStore, key: str
    ) -> None:
        store = await make_store()
        scope = Scope()
        with pytest.raises(InvalidMemory):
            await store.read(key, scope)
        with pytest.raises(InvalidMemory):
            await store.create(key, "d", "c", scope)
        with pytest.raises(InvalidMemory):
            await store.update(key, "d", "c", scope)
        with pytest.raises(InvalidMemory):
            await store.delete(key, scope)
        assert await store.list() == []

    async def test_a_description_is_kept_on_one_line(self, make_store: MakeStore) -> None:
        store = await make_store()
        await store.create("k", "  line one\nline\ttwo\x1b[31m  ", "c")

        assert await store.list() == [Item("k", "line one line two [31m")]

    async def test_a_soft_hyphen_and_a_zero_width_space_are_kept_as_go_keeps_them(
        self, make_store: MakeStore
    ) -> None:
        store = await make_store()
        await store.create("k", "re\u00adstart\u200bnow", "c")

        assert await store.list() == [Item("k", "re\u00adstart\u200bnow")]

    async def test_a_description_yaml_would_misread_survives(self, make_store: MakeStore) -> None:
        store = await make_store()
        tricky = "- key: 'value' \"quoted\" # not a comment --- end"
        await store.create("k", tricky, "---\nbody that looks like a header\n---\n")

        memory = await store.read("k")

        assert memory is not None
        assert memory.description == tricky
        assert memory.content == "---\nbody that looks like a header\n---\n"

    @pytest.mark.parametrize("description", ["", "   \n\t "])
    async def test_an_empty_description_is_refused(
        self, make_store: MakeStore, description: str
    ) -> None:
        store = await make_store()
        with pytest.raises(InvalidMemory, match="description"):
            await store.create("k", description, "c")

    async def test_a_description_over_500_characters_is_cut_at_500_as_go_does(
        self, make_store: MakeStore
    ) -> None:
        store = await make_store()
        await store.create("long", "d" * 499 + "\N{SNOWMAN}" * 2, "c")

        memory = await store.read("long")
        assert memory is not None and memory.description == "d" * 499 + "\N{SNOWMAN}"

    async def test_a_body_over_64_kb_is_refused_and_one_at_the_limit_is_kept(
        self, make_store: MakeStore
    ) -> None:
        store = await make_store()
        # A full-size description and body together must still fit one stored value.
        full = "é" * (MAX_CONTENT_BYTES // 2)
        await store.create("full", "\N{SNOWMAN}" * 500, full)
        with pytest.raises(InvalidMemory, match="64 KB"):
            await store.create("over", "d", "x" * (MAX_CONTENT_BYTES + 1))

        memory = await store.read("full")
        assert memory is not None and memory.content == full

    async def test_a_create_past_the_entry_limit_is_refused(
        self, make_store: MakeStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr("fisk_ai.memory.store.MAX_ENTRIES", 2)
        store = await make_store()
        await store.create("a", "d", "c")
        await store.create("b", "d", "c")

        with pytest.raises(MemoryFull, match="limit of 2"):
            await store.create("c", "d", "c")
        # Replacing an entry that already counts is not a new entry.
        scope = Scope()
        await store.read("a", scope)
        await store.update("a", "d", "changed", scope)

    async def test_info_names_the_backend(self, make_store: MakeStore) -> None:
        store = await make_store()
        assert store.info().backend in {"file", "jetstream"}
