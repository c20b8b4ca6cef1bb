"""Factories of one kind registered under names, so a host resolves a backend by the name its
configuration gives without importing the backend itself.

The package that owns a kind assembles its registry: it names the function that registers its
built-in backends, and that function runs the first time anybody reads the registry, so the
backends (and whatever they import) load only when a host asks for one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Registry"]

F = TypeVar("F")


class Registry(Generic[F]):
    """The ``kind`` of thing registered (``memory backend``), the configuration ``key`` that
    names one, and the ``error`` a name nobody registered raises."""

    def __init__(
        self,
        kind: str,
        *,
        key: str,
        error: Callable[[str], Exception],
        builtins: Callable[[Registry[F]], None] | None = None,
    ) -> None:
        self._kind = kind
        self._key = key
        self._error = error
        self._builtins = builtins
        self._entries: dict[str, F] = {}
        self._loaded = builtins is None

    def register(self, name: str, factory: F | None) -> None:
        """Register ``factory`` under ``name``. An empty name, a missing factory or a duplicate
        is a bug, a built-in's name included."""
        self._load()
        if not name:
            raise ValueError(f"a {self._kind} needs a name")
        if factory is None:
            raise ValueError(f"{self._kind} {name!r} needs a factory")
        if name in self._entries:
            raise ValueError(f"{self._kind} {name!r} is already registered")
        self._entries[name] = factory

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self._load()
        return sorted(self._entries)

    def lookup(self, name: str) -> F:
        """The factory registered under ``name``; the owner's error, naming the key and the
        choices, when there is none."""
        self._load()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries))
            raise self._error(
                f"{self._key} {name!r} is not a known {self._kind}; use one of: {known}"
            ) from None

    def factories(self) -> list[F]:
        """Every registered factory, in the order of registration."""
        self._load()
        return list(self._entries.values())

    def copy(self) -> Registry[F]:
        """A registry holding what this one holds, built-ins included, that registers apart."""
        self._load()
        copied = Registry[F](self._kind, key=self._key, error=self._error)
        copied._entries = dict(self._entries)
        return copied

    def _load(self) -> None:
        if self._loaded or self._builtins is None:
            return
        # Marked first: the built-ins register through this same registry.
        self._loaded = True
        self._builtins(self)
