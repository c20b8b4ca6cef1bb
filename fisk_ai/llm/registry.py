"""The model provider registry.

A provider registers a name, a factory and the environment variables that carry its secrets. The
credential list is required at registration, so no provider can be linked in without declaring
what must be stripped from tool subprocess environments. The built-in providers are registered
here, on the first read of the registry; none of them imports a vendor SDK at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fisk_ai.llm.errors import (
    ProviderAuthError,
    ProviderCallError,
    ProviderError,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
    ProviderUnreachable,
)
from fisk_ai.util.registry import Registry

__all__ = [
    "ProviderAuthError",
    "ProviderCallError",
    "ProviderError",
    "ProviderRegistration",
    "ProviderRejected",
    "ProviderTimeout",
    "ProviderUnavailable",
    "ProviderUnreachable",
    "credential_env_names",
    "lookup",
    "register",
    "registered_names",
]


@dataclass(frozen=True)
class ProviderRegistration:
    name: str
    factory: Callable[..., Any]
    credential_env: tuple[str, ...]


def _builtin_providers(registry: Registry[ProviderRegistration]) -> None:
    from fisk_ai.llm import anthropic, replay

    for name, factory, credential_env in (
        (anthropic.NAME, anthropic.create_provider, anthropic.CREDENTIAL_ENV),
        (replay.NAME, replay.create_provider, ()),
    ):
        registry.register(name, ProviderRegistration(name, factory, credential_env))


_providers = Registry[ProviderRegistration](
    "provider", key="llm.provider", error=ProviderError, builtins=_builtin_providers
)


def register(name: str, factory: Callable[..., Any], credential_env: tuple[str, ...]) -> None:
    """Register a provider. An empty name, a missing factory or a duplicate is a bug."""
    registration = (
        None if factory is None else ProviderRegistration(name, factory, tuple(credential_env))
    )
    _providers.register(name, registration)


def registered_names() -> list[str]:
    return _providers.names()


def lookup(name: str) -> ProviderRegistration:
    return _providers.lookup(name)


def credential_env_names() -> frozenset[str]:
    """The union of every registered provider's secret-bearing environment variables."""
    return frozenset(var for reg in _providers.factories() for var in reg.credential_env)
