"""What every memory backend provides, the limits and validation they share, and the read scope.

A memory is a note the model saved under a key: a one-line description and a body. Backends
store exactly the bytes ``serialize`` makes, so a value moves between them unchanged. Every
method of every backend validates the key before it touches storage, including a read and a
delete, so a key can never name a path or a subject it should not.

The backends are registered in ``fisk_ai.memory.backends``.
"""

from __future__ import annotations

import builtins
import contextlib
import contextvars
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from fisk_ai.errors import BoundedInputError, FiskError
from fisk_ai.util import bounded

__all__ = [
    "MAX_CONTENT_BYTES",
    "MAX_DESCRIPTION_RUNES",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "MAX_KEY_RUNES",
    "InvalidMemory",
    "Item",
    "Memory",
    "MemoryExists",
    "MemoryFull",
    "MemoryStale",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryStoreFactory",
    "Scope",
    "StoreInfo",
    "UnopenedStore",
    "check_capacity",
    "check_injected_backend",
    "current_scope",
    "is_valid_key",
    "normalize_description",
    "parse",
    "serialize",
    "using_scope",
    "validate_key",
    "validate_write",
]

MAX_KEY_RUNES = 200
MAX_DESCRIPTION_RUNES = 500
MAX_CONTENT_BYTES = 64 * 1024
MAX_ENTRIES = 1024
# The largest stored value: the body plus a header whose description YAML may quote and escape
# every byte (four bytes a rune at most, twice over), plus the fences around it.
MAX_ENTRY_BYTES = MAX_CONTENT_BYTES + 2 * (MAX_DESCRIPTION_RUNES * 4) + 64

_KEY = re.compile(r"[A-Za-z0-9._=-]+")
_FENCE = "---\n"


class MemoryStoreError(FiskError):
    """The memory store failed or refused; the message says what to change."""


class InvalidMemory(MemoryStoreError):
    """A key, description or body the limits refuse; the model can correct and retry."""


class MemoryExists(MemoryStoreError):
    """A create found the key already holding a memory."""


class MemoryStale(MemoryStoreError):
    """An overwrite of a memory this conversation has not read, or that changed since."""


class MemoryFull(MemoryStoreError):
    """A create would take the store past its entry limit."""


@dataclass(frozen=True)
class Item:
    """One row of the index: a key and its description. The body is always a separate read."""

    key: str
    description: str


@dataclass(frozen=True)
class Memory:
    """One stored memory. ``revision`` is the store's version of it, None where the backend
    keeps none."""

    key: str
    description: str
    content: str
    revision: int | None = None


@dataclass(frozen=True)
class StoreInfo:
    """Which backend a store is and where it keeps memories. ``location`` is what the operator
    configured (a bucket and prefix), never a path, a URL or a credential."""

    backend: str
    location: str = ""


class Scope:
    """One conversation's record of the memories it has read, and at which revision.

    Only a read on the model's behalf, or the model's own create or overwrite, records a
    revision: seeing a key in the index authorizes nothing. A delete forgets the key, so a stale
    revision cannot authorize overwriting a key that was created again in between.
    """

    def __init__(self, revisions: Mapping[str, int] | None = None) -> None:
        self._revisions: dict[str, int] = dict(revisions or {})

    def remember(self, key: str, revision: int) -> None:
        self._revisions[key] = revision

    def forget(self, key: str) -> None:
        self._revisions.pop(key, None)

    def revision(self, key: str) -> int | None:
        return self._revisions.get(key)

    def snapshot(self) -> dict[str, int]:
        """The revisions as they stand, for the journal."""
        return dict(sorted(self._revisions.items()))


current_scope: contextvars.ContextVar[Scope | None] = contextvars.ContextVar(
    "fisk_ai_memory_scope", default=None
)
"""The scope of the conversation a call belongs to. One store serves every concurrent run, so
the scope is looked up per call rather than captured when the store is built; a call outside
any conversation has none, which authorizes no overwrite."""


@contextlib.contextmanager
def using_scope(scope: Scope | None) -> Iterator[None]:
    """Make ``scope`` the current one for the block (and tasks it starts)."""
    token = current_scope.set(scope)
    try:
        yield
    finally:
        current_scope.reset(token)


class MemoryStore(Protocol):
    """A memory backend. Safe for concurrent use by independent processes sharing one backing
    store; owns no resource to release (a NATS connection is borrowed from the host)."""

    def info(self) -> StoreInfo: ...

    async def list(self) -> builtins.list[Item]:
        """Every stored memory's key and description, sorted by key."""
        ...

    async def read(self, key: str, scope: Scope | None = None) -> Memory | None:
        """The memory under ``key``, or None; the revision read is recorded in ``scope``."""
        ...

    async def create(
        self, key: str, description: str, content: str, scope: Scope | None = None
    ) -> None:
        """Store a new memory; MemoryExists when the key holds one, MemoryFull at the limit."""
        ...

    async def update(
        self, key: str, description: str, content: str, scope: Scope | None = None
    ) -> None:
        """Replace what ``key`` holds; MemoryStale where the backend enforces read-before-update
        and ``scope`` has not read the current revision."""
        ...

    async def delete(self, key: str, scope: Scope | None = None) -> bool:
        """Remove the memory under ``key``; whether there was one."""
        ...


def check_injected_backend(store: MemoryStore, configured: str | None) -> None:
    """Refuse a store an embedder passed in whose backend is not the one agent.yaml names in
    ``harness.memory.backend``; ``configured`` None (the key left out) takes the store as it
    is. Either way round the run would keep its memories somewhere the operator did not say."""
    backend = store.info().backend
    if configured is not None and backend != configured:
        raise MemoryStoreError(
            f'harness.memory.backend is "{configured}" but the memory store passed in is a '
            f'"{backend}" store; set harness.memory.backend to "{backend}", or leave it out to '
            "take the store passed in"
        )


def is_valid_key(key: str) -> bool:
    return (
        0 < len(key) <= MAX_KEY_RUNES
        and _KEY.fullmatch(key) is not None
        and not key.startswith(".")
        and not key.endswith(".")
        and ".." not in key
    )


def validate_key(key: str) -> str:
    """``key`` when it is legal: letters, digits and . _ = - only, at most 200 characters, no
    leading or trailing dot and no ``..``; InvalidMemory with the rule otherwise."""
    if is_valid_key(key):
        return key
    if not key:
        raise InvalidMemory("a memory key must not be empty")
    if len(key) > MAX_KEY_RUNES:
        raise InvalidMemory(f"a memory key is at most {MAX_KEY_RUNES} characters, not {len(key)}")
    raise InvalidMemory(
        f"memory key {key!r} is not valid: use letters, digits and . _ = - only (no slashes or "
        "spaces), with no leading or trailing dot and no '..'"
    )


def normalize_description(description: str) -> str:
    """One line of at most 500 characters, as Go's store makes it: an ASCII control character
    (a newline or tab included) becomes a space, runs of whitespace collapse, and a longer
    description is cut at 500 characters. Every other character is kept (a soft hyphen, a
    zero-width space); a terminal shows the description only after it is sanitized."""
    spaced = "".join(" " if char < " " or char == "\x7f" else char for char in description)
    return " ".join(spaced.split())[:MAX_DESCRIPTION_RUNES]


def validate_write(key: str, description: str, content: str) -> str:
    """Check a write against the shared limits; the normalized description to store."""
    validate_key(key)
    normalized = normalize_description(description)
    if not normalized:
        raise InvalidMemory("a memory needs a one-line description that is not empty")
    size = len(content.encode())
    if size > MAX_CONTENT_BYTES:
        raise InvalidMemory(
            f"a memory body is at most {MAX_CONTENT_BYTES} bytes (64 KB), not {size}; split it "
            "across several keys or summarize it"
        )
    return normalized


def check_capacity(entries: int) -> None:
    """Refuse a create that would take a store holding ``entries`` past the limit."""
    if entries >= MAX_ENTRIES:
        raise MemoryFull(
            f"the memory store already holds {entries} entries, its limit of {MAX_ENTRIES}; "
            "delete or merge memories before saving a new one"
        )


def serialize(description: str, content: str) -> bytes:
    """The stored form both backends share: a YAML header holding the description, a blank
    line, then the body. A real YAML writer quotes the description, so a colon, a quote or a
    leading dash in it cannot corrupt the header."""
    import yaml

    header = yaml.safe_dump(
        {"description": description},
        allow_unicode=True,
        default_flow_style=False,
        width=1 << 20,
    )
    return (_FENCE + header + _FENCE + "\n" + content).encode()


def parse(data: bytes) -> tuple[str, str]:
    """The description and body of a stored value, as Go's store reads it. A value without a
    readable header is all body, so a file somebody wrote by hand still reads. The header is
    closed by the first ``---`` line after it, or by a ``---`` that ends the value (a header with
    no body); a header that is not YAML, or whose description is not text, leaves the whole
    value as body. The description is normalized as a write normalizes it, so a header written
    by hand cannot put a second line into the memory index; a value longer than any write makes
    (a file grown by hand, a bucket with no value limit) is read only to ``MAX_ENTRY_BYTES``."""
    text = data[:MAX_ENTRY_BYTES].decode(errors="replace")
    if not text.startswith(_FENCE):
        return "", text
    rest = text[len(_FENCE) :]
    end = rest.find("\n" + _FENCE)
    if end >= 0:
        header, body = rest[: end + 1], rest[end + 1 + len(_FENCE) :]
    elif rest.endswith("\n" + _FENCE.rstrip("\n")):
        header, body = rest[: -len(_FENCE.rstrip("\n"))], ""
    else:
        return "", text
    try:
        # Bounded: a planted header of a few hundred bytes of nested aliases must not expand.
        decoded = bounded.load_yaml(header, what="the memory header", max_bytes=MAX_ENTRY_BYTES)
    except BoundedInputError:
        return "", text
    description = decoded.get("description") if isinstance(decoded, dict) else None
    if isinstance(description, dict | list):
        return "", text
    return normalize_description(_as_text(description)), body.removeprefix("\n")


def _as_text(value: object) -> str:
    """A scalar as Go's YAML reader puts it into a text field."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class UnopenedStore:
    """A store that stands in where memory is described but never used (``fisk info`` lists
    the memory tools without opening the store); every operation refuses."""

    def __init__(self, info: StoreInfo) -> None:
        self._info = info

    def info(self) -> StoreInfo:
        return self._info

    async def list(self) -> builtins.list[Item]:
        raise self._unopened()

    async def read(self, key: str, scope: Scope | None = None) -> Memory | None:
        raise self._unopened()

    async def create(
        self, key: str, description: str, content: str, scope: Scope | None = None
    ) -> None:
        raise self._unopened()

    async def update(
        self, key: str, description: str, content: str, scope: Scope | None = None
    ) -> None:
        raise self._unopened()

    async def delete(self, key: str, scope: Scope | None = None) -> bool:
        raise self._unopened()

    def _unopened(self) -> MemoryStoreError:
        return MemoryStoreError(f"the {self._info.backend} memory store was not opened here")


MemoryStoreFactory = Callable[..., MemoryStore]
