"""The session backends by name: journal files and JetStream streams.

The host resolves the configured ``harness.sessions.backend`` here, without importing the
backend itself; the JetStream one imports nats only when it is used.
"""

from __future__ import annotations

from fisk_ai.sessions.errors import SessionError
from fisk_ai.sessions.store import SessionStoreFactory
from fisk_ai.util.registry import Registry

__all__ = ["lookup_backend", "register_backend", "registered_backends"]


def _builtin_backends(registry: Registry[SessionStoreFactory]) -> None:
    from fisk_ai.sessions import file, jetstream

    registry.register("file", file.file_backend)
    registry.register("jetstream", jetstream.jetstream)


_backends = Registry[SessionStoreFactory](
    "session backend",
    key="harness.sessions.backend",
    error=SessionError,
    builtins=_builtin_backends,
)


def register_backend(name: str, factory: SessionStoreFactory) -> None:
    """Register a session backend. An empty name, a missing factory or a duplicate is a bug."""
    _backends.register(name, factory)


def registered_backends() -> list[str]:
    return _backends.names()


def lookup_backend(name: str) -> SessionStoreFactory:
    return _backends.lookup(name)
