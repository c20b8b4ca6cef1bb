"""The session backends by name: journal files and JetStream streams.

The host resolves the configured ``harness.sessions.backend`` here, without importing the
backend itself; the JetStream one imports nats only when it is used. A backend declares what it
needs from the host (``requires_nats``), so the host provides it without naming any backend.
"""

from __future__ import annotations

from dataclasses import dataclass

from fisk_ai.sessions.errors import SessionError
from fisk_ai.sessions.store import SessionStoreFactory
from fisk_ai.util.registry import Registry

__all__ = [
    "SessionBackend",
    "backend_requires_nats",
    "lookup_backend",
    "register_backend",
    "registered_backends",
]


@dataclass(frozen=True)
class SessionBackend:
    """A registered backend: its factory, called with the keys of its ``harness.sessions.options``
    block, and whether it reaches NATS. A backend that does is also given ``nats_context`` (the
    context's name), ``open_connection`` (makes a connection through it) and
    ``jetstream_options`` (the context's JetStream domain or API prefix)."""

    factory: SessionStoreFactory
    requires_nats: bool = False


def _builtin_backends(registry: Registry[SessionBackend]) -> None:
    from fisk_ai.sessions import file, jetstream

    registry.register("file", SessionBackend(file.file_backend))
    registry.register("jetstream", SessionBackend(jetstream.jetstream, requires_nats=True))


_backends = Registry[SessionBackend](
    "session backend",
    key="harness.sessions.backend",
    error=SessionError,
    builtins=_builtin_backends,
)


def register_backend(
    name: str, factory: SessionStoreFactory, *, requires_nats: bool = False
) -> None:
    """Register a session backend. An empty name, a missing factory or a duplicate is a bug."""
    # A missing factory is passed on as missing, so the registry refuses it by its own words.
    _backends.register(
        name, SessionBackend(factory, requires_nats) if factory is not None else None
    )


def registered_backends() -> list[str]:
    return _backends.names()


def lookup_backend(name: str) -> SessionStoreFactory:
    return _backends.lookup(name).factory


def backend_requires_nats(name: str) -> bool:
    """Whether the backend registered as ``name`` reaches NATS through the agent's context."""
    return _backends.lookup(name).requires_nats
