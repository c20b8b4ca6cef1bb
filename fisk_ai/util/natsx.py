"""How a failure talking to NATS is told to an operator: one phrase for what went wrong and one
for where, shared by every store that keeps its data in JetStream."""

from __future__ import annotations

__all__ = ["describe_nats_failure", "nats_server_phrase"]


def describe_nats_failure(failure: BaseException) -> str:
    """What went wrong with NATS, in a phrase; a JetStream refusal gives its own words."""
    description = getattr(failure, "description", None)
    if description:
        code = getattr(failure, "err_code", None)
        return f"{description}, error {code}" if code else str(description)
    if isinstance(failure, TimeoutError):
        return "NATS did not answer in time"
    from nats.js.errors import ServiceUnavailableError

    if isinstance(failure, ServiceUnavailableError):
        return "JetStream is unavailable"
    return str(failure).removeprefix("nats: ").strip() or type(failure).__name__


def nats_server_phrase(context_name: str) -> str:
    """The server a store talks to, as a sentence names it."""
    if context_name:
        return f"the NATS server of NATS context {context_name}"
    return "the NATS server"
