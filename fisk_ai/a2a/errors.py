"""What can go wrong with an a2a message or its transport, each with the service code to answer.

A receiver that refuses a message answers with a NATS service error rather than a reply, and the
code travels in the ``Nats-Service-Error-Code`` header: 400 for a message the sender got wrong,
500 when this side could not produce a valid message of its own. Transport failures carry the
status NATS itself would report (503 for no responders, 408 for a request nobody answered).
"""

from __future__ import annotations

from fisk_ai.errors import FiskError

__all__ = [
    "BAD_REQUEST",
    "INTERNAL_ERROR",
    "NO_RESPONDERS",
    "REQUEST_TIMEOUT",
    "A2AError",
    "InvalidMessage",
    "MessageTooLarge",
    "NoResponders",
    "RemoteServiceError",
    "RequestTimeout",
    "TransportClosed",
    "UnexpectedProtocol",
    "UnknownProtocol",
]

BAD_REQUEST = 400
INTERNAL_ERROR = 500
NO_RESPONDERS = 503
REQUEST_TIMEOUT = 408


class A2AError(FiskError):
    """An a2a failure; ``service_code`` is the code a receiver answers the sender with."""

    default_service_code = BAD_REQUEST

    def __init__(self, message: str, *, service_code: int | None = None) -> None:
        super().__init__(message)
        self.service_code = self.default_service_code if service_code is None else service_code


class MessageTooLarge(A2AError):
    """A message over the size cap, refused before anything in it was read."""

    def __init__(self, message: str, *, size: int, limit: int, service_code: int) -> None:
        super().__init__(message, service_code=service_code)
        self.size = size
        self.limit = limit


class InvalidMessage(A2AError):
    """A message that is not JSON, or not a valid message of the protocol it names."""


class UnknownProtocol(InvalidMessage):
    """A protocol id this build does not know, which decides what the message means."""


class UnexpectedProtocol(InvalidMessage):
    """A known protocol id arriving where only the other direction's messages belong."""


class RemoteServiceError(A2AError):
    """The peer refused the message with a service error instead of replying."""

    def __init__(self, message: str, *, service_code: int, description: str) -> None:
        super().__init__(message, service_code=service_code)
        self.description = description


class NoResponders(A2AError):
    """Nothing is subscribed to the subject a request was sent to."""

    default_service_code = NO_RESPONDERS


class RequestTimeout(A2AError):
    """A request was delivered but no reply came back in time."""

    default_service_code = REQUEST_TIMEOUT


class TransportClosed(A2AError):
    """The transport was used after it was closed."""

    default_service_code = INTERNAL_ERROR
