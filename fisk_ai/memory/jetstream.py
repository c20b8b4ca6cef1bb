"""The jetstream backend: memories in a JetStream KV bucket the operator made.

A memory is stored under ``<prefix>.<key>`` (or ``<key>`` with the empty prefix, a flat keyspace)
as exactly the bytes the file backend writes. Nothing here creates or edits the bucket: binding
reads its configuration and refuses, at startup, a bucket that is missing, expires values, or
caps a value below a full entry, naming the key to change and the ``nats kv add`` command that
makes a right one. The bind runs under a ten-second timeout, so a wrong name or an unreachable
server fails the run at start rather than hanging.

An overwrite is a compare-and-swap on the revision the conversation read (``kv.update``), so an
overwrite of a memory the conversation has not read, or that changed since, is refused as
stale; ``no_require_read_before_update`` turns that into a plain put. A create is ``kv.create``,
which fails cleanly when two writers race for the same new key.

The connection is borrowed from the host and never closed here.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fisk_ai.memory.store import (
    MAX_ENTRY_BYTES,
    Item,
    Memory,
    MemoryExists,
    MemoryStale,
    MemoryStoreError,
    Scope,
    StoreInfo,
    check_capacity,
    is_valid_key,
    parse,
    serialize,
    validate_key,
    validate_write,
)
from fisk_ai.util.natsx import describe_nats_failure, nats_server_phrase

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient
    from nats.js.kv import KeyValue

__all__ = [
    "BIND_TIMEOUT",
    "BucketShape",
    "JetStreamMemoryStore",
    "jetstream",
    "kv_add_command",
]

BIND_TIMEOUT = 10.0
_OPTION = "harness.memory.options.bucket"


def kv_add_command(bucket: str, context_name: str = "") -> str:
    """The nats CLI command that makes a bucket this backend binds to."""
    context = f"--context {context_name} " if context_name else ""
    return f"nats {context}kv add {bucket} --history=1 --max-value-size={MAX_ENTRY_BYTES}"


@dataclass(frozen=True)
class BucketShape:
    """What binding found: the bucket's value limit (0 for none), for ``fisk info``."""

    max_value_size: int


class JetStreamMemoryStore:
    """Memories in KV bucket ``bucket`` over a borrowed ``connection``. Call ``bind`` at startup
    to check the bucket; every other method binds on first use too."""

    def __init__(
        self,
        bucket: str,
        *,
        connection: NatsClient,
        prefix: str,
        require_read_before_update: bool = True,
        context_name: str = "",
        jetstream_options: Mapping[str, str] | None = None,
        bind_timeout: float = BIND_TIMEOUT,
    ) -> None:
        if prefix and not is_valid_key(prefix):
            raise MemoryStoreError(
                f"harness.memory.options.prefix {prefix!r} is not a valid key prefix; use "
                "letters, digits and . _ = - with no leading or trailing dot"
            )
        self._bucket = bucket
        self._connection = connection
        self._prefix = prefix
        self._require_read = require_read_before_update
        self._context_name = context_name
        self._jetstream_options = dict(jetstream_options or {})
        self._bind_timeout = bind_timeout
        self._kv: KeyValue | None = None
        self._guard = asyncio.Lock()

    @property
    def bucket(self) -> str:
        return self._bucket

    @property
    def prefix(self) -> str:
        return self._prefix

    def info(self) -> StoreInfo:
        where = f"{self._bucket}, prefix {self._prefix}" if self._prefix else self._bucket
        return StoreInfo("jetstream", where)

    async def bind(self) -> BucketShape:
        """Check the bucket now; MemoryStoreError naming the fix when it will not do."""
        async with self._guard:
            self._kv, shape = await self._bind()
        return shape

    async def list(self) -> builtins.list[Item]:
        kv = await self._bound()
        with self._failures("list memories"):
            items = [Item(key, parse(value)[0]) async for key, value, _ in self._entries(kv)]
        return sorted(items, key=lambda item: item.key)

    async def read(self, key: str, scope: Scope | None = None) -> Memory | None:
        validate_key(key)
        kv = await self._bound()
        entry = await self._get(kv, key)
        if entry is None:
            if scope is not None:
                scope.forget(key)
            return None
        value, revision = entry
        if scope is not None:
            scope.remember(key, revision)
        description, content = parse(value)
        return Memory(key, description, content, revision)

    async def create(
        self, key: str, description: str, content: str, scope: Scope | None = None
    ) -> None:
        import nats.js.errors

        normalized = validate_write(key, description, content)
        kv = await self._bound()
        check_capacity(await self._count(kv))
        with self._failures(f"save memory {key!r}"):
            try:
                revision = await kv.create(self._stored(key), serialize(normalized, content))
            except nats.js.errors.KeyWrongLastSequenceError:
                raise MemoryExists(f"a memory is already stored under key {key!r}") from None
        if scope is not None:
            scope.remember(key, revision)

    async def update(
        self, key: str, description: str, content: str, scope: Scope | None = None
    ) -> None:
        import nats.js.errors

        normalized = validate_write(key, description, content)
        kv = await self._bound()
        value = serialize(normalized, content)
        if not self._require_read:
            with self._failures(f"save memory {key!r}"):
                if await self._get(kv, key) is None:
                    check_capacity(await self._count(kv))
                revision = await kv.put(self._stored(key), value)
        else:
            known = scope.revision(key) if scope is not None else None
            if known is None:
                raise MemoryStale(f"memory {key!r} was not read in this conversation")
            with self._failures(f"save memory {key!r}"):
                try:
                    revision = await kv.update(self._stored(key), value, last=known)
                except nats.js.errors.KeyWrongLastSequenceError:
                    if scope is not None:
                        scope.forget(key)
                    raise MemoryStale(f"memory {key!r} changed since it was read") from None
        if scope is not None:
            scope.remember(key, revision)

    async def delete(self, key: str, scope: Scope | None = None) -> bool:
        validate_key(key)
        kv = await self._bound()
        if scope is not None:
            scope.forget(key)
        if await self._get(kv, key) is None:
            return False
        with self._failures(f"delete memory {key!r}"):
            await kv.delete(self._stored(key))
        return True

    def _stored(self, key: str) -> str:
        return f"{self._prefix}.{key}" if self._prefix else key

    async def _bound(self) -> KeyValue:
        async with self._guard:
            if self._kv is None:
                self._kv, _ = await self._bind()
            return self._kv

    async def _bind(self) -> tuple[KeyValue, BucketShape]:
        import nats.errors
        import nats.js.errors

        try:
            async with asyncio.timeout(self._bind_timeout):
                js = self._connection.jetstream(**self._jetstream_options)
                try:
                    kv = await js.key_value(self._bucket)
                    status = await kv.status()
                except nats.js.errors.BucketNotFoundError:
                    raise MemoryStoreError(
                        f"memory bucket {self._bucket} does not exist, and the jetstream memory "
                        f"backend never creates one; create it with: {self._fix()} (or change "
                        f"{_OPTION})"
                    ) from None
                except nats.js.errors.InvalidBucketNameError:
                    raise MemoryStoreError(
                        f"{self._bucket!r} is not a valid bucket name; change {_OPTION}"
                    ) from None
                except nats.errors.Error as failure:
                    raise MemoryStoreError(
                        f"memory bucket {self._bucket} could not be described "
                        f"({describe_nats_failure(failure)}); check that {self._server()} is up "
                        "and has JetStream enabled"
                    ) from None
        except TimeoutError:
            raise MemoryStoreError(
                f"memory bucket {self._bucket} could not be bound within "
                f"{self._bind_timeout:g} s; check {_OPTION} and that {self._server()} is up"
            ) from None
        config = status.stream_info.config
        max_age = config.max_age or 0
        if max_age > 0:
            raise MemoryStoreError(
                f"memory bucket {self._bucket} expires values after {max_age:g} s, so memories "
                f"would silently vanish; use a bucket without a TTL, made with: {self._fix()} "
                f"(or change {_OPTION})"
            )
        size = config.max_msg_size or 0
        if 0 < size < MAX_ENTRY_BYTES:
            raise MemoryStoreError(
                f"memory bucket {self._bucket} caps a value at {size} bytes, below the "
                f"{MAX_ENTRY_BYTES} a full memory needs; use a bucket made with: {self._fix()} "
                f"(or change {_OPTION})"
            )
        return kv, BucketShape(max(size, 0))

    async def _get(self, kv: KeyValue, key: str) -> tuple[bytes, int] | None:
        import nats.js.errors

        with self._failures(f"read memory {key!r}"):
            try:
                entry = await kv.get(self._stored(key))
            except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
                return None
        return entry.value or b"", entry.revision or 0

    async def _entries(self, kv: KeyValue) -> AsyncIterator[tuple[str, bytes, int]]:
        """Every live memory as (key, value, revision), keys outside this prefix or not legal
        left out."""
        watched = f"{self._prefix}.>" if self._prefix else ">"
        watcher = await kv.watch(watched, ignore_deletes=True)
        try:
            async for entry in watcher:
                # The watcher marks the end of what is stored with an empty entry.
                if entry is None:
                    break
                if entry.operation is not None or entry.value is None:
                    continue
                stored = entry.key
                key = stored.removeprefix(f"{self._prefix}.") if self._prefix else stored
                if is_valid_key(key):
                    yield key, entry.value, entry.revision or 0
        finally:
            with contextlib.suppress(Exception):
                await watcher.stop()  # type: ignore[no-untyped-call]

    async def _count(self, kv: KeyValue) -> int:
        with self._failures("count memories"):
            return len([key async for key, _, _ in self._entries(kv)])

    def _fix(self) -> str:
        return kv_add_command(self._bucket, self._context_name)

    def _server(self) -> str:
        return nats_server_phrase(self._context_name)

    @contextlib.contextmanager
    def _failures(self, doing: str) -> Iterator[None]:
        """NATS failures as one-sentence errors; the store's own errors pass through."""
        import nats.errors

        try:
            yield
        except (nats.errors.Error, TimeoutError) as failure:
            raise MemoryStoreError(
                f"could not {doing} in memory bucket {self._bucket} "
                f"({describe_nats_failure(failure)}); check that {self._server()} is up"
            ) from None


def jetstream(
    *,
    bucket: str,
    connection: NatsClient,
    prefix: str,
    require_read_before_update: bool = True,
    nats_context: str = "",
    jetstream_options: Mapping[str, str] | None = None,
) -> JetStreamMemoryStore:
    """The registry's factory: bind ``bucket`` over ``connection`` (borrowed, never closed).
    ``nats_context`` names where the connection leads, for messages."""
    return JetStreamMemoryStore(
        bucket,
        connection=connection,
        prefix=prefix,
        require_read_before_update=require_read_before_update,
        context_name=nats_context,
        jetstream_options=jetstream_options,
    )
