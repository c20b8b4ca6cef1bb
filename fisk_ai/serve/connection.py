"""Connections to the NATS server a context describes, for every command that needs one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fisk_ai.errors import FiskError

if TYPE_CHECKING:
    from fisk_ai.a2a.nats import NatsTransport

__all__ = ["connect_transport"]


async def connect_transport(
    context_name: str | None,
    *,
    name: str,
    purpose: str = "",
    fix: str = "",
    warn_unauthenticated: Callable[[str], None] | None = None,
) -> NatsTransport:
    """An a2a transport on its own connection to the server of NATS context ``context_name``
    (the selected context when None). ``purpose`` and ``fix`` shape the one-sentence error: what
    the connection was for, and what to check besides the context's url and credentials.
    ``warn_unauthenticated`` is told, once, when the context carries no credentials at all."""
    from fisk_ai.a2a.nats import NatsTransport
    from fisk_ai.broker.context import connect_options, load_context

    context = load_context(context_name)
    if warn_unauthenticated is not None and not context.carries_credentials:
        warn_unauthenticated(
            f'NATS context "{context.name}" carries no credentials (no user, token, nkey, creds '
            f"or client certificate): anyone who can reach {context.redacted_url} can read this "
            "agent's conversations and answer in them; give the agent a NATS user with the "
            "permissions in docs/serving.md (NATS permissions)"
        )
    try:
        return await NatsTransport.open(connect_options(context), name=name)
    except FiskError:
        raise
    except Exception as error:
        reason = str(error) or type(error).__name__
        what = f", {purpose}" if purpose else ""
        check = f"{fix} and " if fix else ""
        raise FiskError(
            f'cannot connect to NATS at {context.redacted_url} (NATS context "{context.name}"'
            f"{what}): {reason}; check {check}the context's url and credentials"
        ) from None
