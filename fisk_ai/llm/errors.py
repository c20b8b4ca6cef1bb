"""How a provider fails: at registration, resolution, configuration, or a model call."""

from __future__ import annotations

from fisk_ai.errors import FiskError

__all__ = [
    "ProviderAuthError",
    "ProviderCallError",
    "ProviderError",
    "ProviderRejected",
    "ProviderTimeout",
    "ProviderUnavailable",
    "ProviderUnreachable",
]


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
