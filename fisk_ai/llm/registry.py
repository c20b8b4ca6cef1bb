"""The model provider registry.

A provider registers a name, a factory and the environment variables that carry its secrets. The
credential list is required at registration, so no provider can be linked in without declaring
what must be stripped from tool subprocess environments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fisk_ai.errors import FiskError


class ProviderError(FiskError):
    """A provider could not be registered, resolved, configured or called."""


class ProviderCallError(ProviderError):
    """A model call failed. ``status`` is the HTTP status when the endpoint answered one."""

    def __init__(self, message: str, *, status: int | None = None, request_id: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.request_id = request_id


class ProviderAuthError(ProviderCallError):
    """The endpoint refused the credentials."""


class ProviderUnreachable(ProviderCallError):
    """No answer could be had from the endpoint at all."""


class ProviderTimeout(ProviderCallError):
    """The call ran past its per-call timeout."""


class ProviderRejected(ProviderCallError):
    """The endpoint refused the request itself; sending it again unchanged fails the same way."""


class ProviderUnavailable(ProviderCallError):
    """The endpoint is overloaded, rate limited or failing; the same request may pass later."""


@dataclass(frozen=True)
class ProviderRegistration:
    name: str
    factory: Callable[..., Any]
    credential_env: tuple[str, ...]


_providers: dict[str, ProviderRegistration] = {}


def register(name: str, factory: Callable[..., Any], credential_env: tuple[str, ...]) -> None:
    """Register a provider. An empty name, a missing factory or a duplicate is a bug."""
    if not name:
        raise ValueError("a provider needs a name")
    if factory is None:
        raise ValueError(f"provider {name!r} needs a factory")
    if name in _providers:
        raise ValueError(f"provider {name!r} is already registered")
    _providers[name] = ProviderRegistration(name, factory, tuple(credential_env))


def registered_names() -> list[str]:
    _load_builtin_providers()
    return sorted(_providers)


def lookup(name: str) -> ProviderRegistration:
    _load_builtin_providers()
    try:
        return _providers[name]
    except KeyError:
        known = ", ".join(sorted(_providers))
        raise ProviderError(
            f"llm.provider {name!r} is not a known provider; use one of: {known}"
        ) from None


def credential_env_names() -> frozenset[str]:
    """The union of every registered provider's secret-bearing environment variables."""
    _load_builtin_providers()
    return frozenset(var for reg in _providers.values() for var in reg.credential_env)


def _load_builtin_providers() -> None:
    # Importing a provider module registers it; none of them imports a vendor SDK at import time.
    import fisk_ai.llm.anthropic
    import fisk_ai.llm.replay  # noqa: F401
