"""An in-memory memory store with revisions, that enforces read-before-update as the jetstream
backend does (unless told not to), for tests of the tools and the loop."""

from __future__ import annotations

from fisk_ai.memory import (
    Item,
    Memory,
    MemoryExists,
    MemoryStale,
    MemoryStoreError,
    Scope,
    StoreInfo,
    check_capacity,
    validate_key,
    validate_write,
)


class FakeMemoryStore:
    def __init__(self, *, require_read_before_update: bool = True) -> None:
        self.memories: dict[str, tuple[str, str, int]] = {}
        self.require_read = require_read_before_update
        self.failure: str = ""
        self._revision = 0

    def info(self) -> StoreInfo:
        return StoreInfo("fake")

    async def list(self) -> list[Item]:
        self._maybe_fail()
        return [Item(key, held[0]) for key, held in sorted(self.memories.items())]

    async def read(self, key: str, scope: Scope | None = None) -> Memory | None:
        validate_key(key)
        self._maybe_fail()
        held = self.memories.get(key)
        if held is None:
            return None
        if scope is not None:
            scope.remember(key, held[2])
        return Memory(key, held[0], held[1], held[2])

    async def create(
        self, key: str, description: str, content: str, scope: Scope | None = None
    ) -> None:
        normalized = validate_write(key, description, content)
        self._maybe_fail()
        if key in self.memories:
            raise MemoryExists(f"a memory is already stored under key {key!r}")
        check_capacity(len(self.memories))
        self._store(key, normalized, content, scope)

    async def update(
        self, key: str, description: str, content: str, scope: Scope | None = None
    ) -> None:
        normalized = validate_write(key, description, content)
        self._maybe_fail()
        if self.require_read:
            known = scope.revision(key) if scope is not None else None
            held = self.memories.get(key)
            if known is None or held is None or held[2] != known:
                raise MemoryStale(f"memory {key!r} was not read or changed since")
        self._store(key, normalized, content, scope)

    async def delete(self, key: str, scope: Scope | None = None) -> bool:
        validate_key(key)
        self._maybe_fail()
        if scope is not None:
            scope.forget(key)
        return self.memories.pop(key, None) is not None

    def put(self, key: str, description: str, content: str) -> None:
        """Write behind every conversation's back, as another agent would."""
        self._store(key, description, content, None)

    def _store(self, key: str, description: str, content: str, scope: Scope | None) -> None:
        self._revision += 1
        self.memories[key] = (description, content, self._revision)
        if scope is not None:
            scope.remember(key, self._revision)

    def _maybe_fail(self) -> None:
        if self.failure:
            raise MemoryStoreError(self.failure)
