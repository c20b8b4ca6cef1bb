"""The memory backends by name: the file store and the JetStream key-value bucket.

The host resolves the configured ``harness.memory.backend`` here; a backend module is imported
only when the registry is first read, and the JetStream one imports nats only when it is used.
"""

from __future__ import annotations

import builtins

from fisk_ai.memory.store import MemoryStoreError, MemoryStoreFactory
from fisk_ai.util.registry import Registry

__all__ = ["lookup_backend", "register_backend", "registered_backends"]


def _builtin_backends(registry: Registry[MemoryStoreFactory]) -> None:
    from fisk_ai.memory import file, jetstream

    registry.register("file", file.file)
    registry.register("jetstream", jetstream.jetstream)


_backends = Registry[MemoryStoreFactory](
    "memory backend",
    key="harness.memory.backend",
    error=MemoryStoreError,
    builtins=_builtin_backends,
)


def register_backend(name: str, factory: MemoryStoreFactory) -> None:
    """Register a memory backend. An empty name, a missing factory or a duplicate is a bug."""
    _backends.register(name, factory)


def registered_backends() -> builtins.list[str]:
    return _backends.names()


def lookup_backend(name: str) -> MemoryStoreFactory:
    return _backends.lookup(name)
