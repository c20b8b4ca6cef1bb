"""The memory backends by name: the file store and the JetStream key-value bucket.

The host resolves the configured ``harness.memory.backend`` here; a backend module is imported
only when the registry is first read, and the JetStream one imports nats only when it is used.
A backend declares what it needs from the host (``requires_nats``), so the host provides it
without naming any backend.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

from fisk_ai.memory.store import MemoryStoreError, MemoryStoreFactory
from fisk_ai.util.registry import Registry

__all__ = [
    "MemoryBackend",
    "backend_requires_nats",
    "lookup_backend",
    "register_backend",
    "registered_backends",
]


@dataclass(frozen=True)
class MemoryBackend:
    """A registered backend: its factory, and whether it reaches NATS through the agent's
    ``nats_context`` (the host then connects before it builds the store)."""

    factory: MemoryStoreFactory
    requires_nats: bool = False


def _builtin_backends(registry: Registry[MemoryBackend]) -> None:
    from fisk_ai.memory import file, jetstream

    registry.register("file", MemoryBackend(file.file))
    registry.register("jetstream", MemoryBackend(jetstream.jetstream, requires_nats=True))


_backends = Registry[MemoryBackend](
    "memory backend",
    key="harness.memory.backend",
    error=MemoryStoreError,
    builtins=_builtin_backends,
)


def register_backend(
    name: str, factory: MemoryStoreFactory, *, requires_nats: bool = False
) -> None:
    """Register a memory backend. An empty name, a missing factory or a duplicate is a bug."""
    # A missing factory is passed on as missing, so the registry refuses it by its own words.
    _backends.register(name, MemoryBackend(factory, requires_nats) if factory is not None else None)


def registered_backends() -> builtins.list[str]:
    return _backends.names()


def lookup_backend(name: str) -> MemoryStoreFactory:
    return _backends.lookup(name).factory


def backend_requires_nats(name: str) -> bool:
    """Whether the backend registered as ``name`` reaches NATS through the agent's context."""
    return _backends.lookup(name).requires_nats
