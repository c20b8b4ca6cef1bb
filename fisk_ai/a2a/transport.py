"""What the serving engine and the client need from a message transport, and the subjects they use.

Two bindings carry the same bytes: NATS, between processes, and the in-process one in
``fisk_ai.a2a.in_process``, between tasks of one event loop. Both behave as NATS does in the
ways the protocol relies on: a queue group hands each message to one member, each subscription
runs its handler for one message at a time, and a message sent with a reply subject to a subject
nobody listens on brings back an empty reply with status 503 ("no responders").

Subjects, all under ``choria.fisk-ai``: ``discovery.<identity>`` and ``tool.<identity>`` (kept
apart so a permission can allow discovery without allowing tool calls), ``task.<identity>`` for
prompts, and ``cancel.<identity>.<request>`` and ``elicit.<identity>.<request>`` addressing one
running task. Identities and request ids are limited to subject-safe characters for that reason.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from types import MappingProxyType
from typing import Protocol

from fisk_ai.a2a.errors import A2AError, NoResponders, RemoteServiceError

__all__ = [
    "NO_RESPONDERS_STATUS",
    "SERVICE_ERROR_CODE_HEADER",
    "SERVICE_ERROR_HEADER",
    "STATUS_HEADER",
    "SUBJECT_PREFIX",
    "Delivery",
    "Handler",
    "Subscription",
    "Transport",
    "cancel_subject",
    "discovery_subject",
    "elicit_subject",
    "reply_failure",
    "service_error_headers",
    "task_subject",
    "tool_subject",
]

SUBJECT_PREFIX = "choria.fisk-ai"
SERVICE_ERROR_HEADER = "Nats-Service-Error"
SERVICE_ERROR_CODE_HEADER = "Nats-Service-Error-Code"
STATUS_HEADER = "Status"
NO_RESPONDERS_STATUS = "503"

_SUBJECT_TOKEN = re.compile(r"[a-zA-Z0-9_-]+", re.ASCII)
_REQUEST_LIMIT = 64


def discovery_subject(identity: str) -> str:
    return f"{SUBJECT_PREFIX}.discovery.{_token(identity, 'identity')}"


def tool_subject(identity: str) -> str:
    return f"{SUBJECT_PREFIX}.tool.{_token(identity, 'identity')}"


def task_subject(identity: str) -> str:
    return f"{SUBJECT_PREFIX}.task.{_token(identity, 'identity')}"


def cancel_subject(identity: str, request: str) -> str:
    return f"{SUBJECT_PREFIX}.cancel.{_token(identity, 'identity')}.{_request_token(request)}"


def elicit_subject(identity: str, request: str) -> str:
    return f"{SUBJECT_PREFIX}.elicit.{_token(identity, 'identity')}.{_request_token(request)}"


def _token(value: str, what: str) -> str:
    # A dot or a wildcard here would address other subjects than the one meant.
    if _SUBJECT_TOKEN.fullmatch(value) is None:
        raise ValueError(f"{what} {value!r} is not letters, digits, - and _ only")
    return value


def _request_token(request: str) -> str:
    if len(request) > _REQUEST_LIMIT:
        raise ValueError(f"request {request[:16]!r}... is longer than {_REQUEST_LIMIT} characters")
    return _token(request, "request")


@dataclass(frozen=True)
class Delivery:
    """One message as a subscriber receives it: ``reply`` is where an answer goes ("" when
    the sender wants none) and ``headers`` carries transport status and service errors."""

    subject: str
    data: bytes
    reply: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))

    @property
    def no_responders(self) -> bool:
        return self.headers.get(STATUS_HEADER) == NO_RESPONDERS_STATUS and not self.data


Handler = Callable[[Delivery], Awaitable[None]]


def service_error_headers(error: A2AError) -> dict[str, str]:
    """The headers of an empty reply refusing a message, as a NATS micro service sends them."""
    return {SERVICE_ERROR_HEADER: str(error), SERVICE_ERROR_CODE_HEADER: str(error.service_code)}


def reply_failure(reply: Delivery, subject: str) -> A2AError | None:
    """What went wrong, when a reply to a message sent on ``subject`` is not an answer: nobody
    was listening, or the receiver refused the message with a service error."""
    if reply.no_responders:
        return NoResponders(
            f"nothing answers on {subject}; check that the agent is running and that its "
            "identity matches the one addressed"
        )
    code_text = reply.headers.get(SERVICE_ERROR_CODE_HEADER)
    if code_text is None:
        return None
    description = reply.headers.get(SERVICE_ERROR_HEADER, "")
    try:
        code = int(code_text)
    except ValueError:
        code = 500
    return RemoteServiceError(
        f"the agent on {subject} refused the message with error {code_text}: {description}",
        service_code=code,
        description=description,
    )


class Subscription(Protocol):
    @property
    def subject(self) -> str: ...

    @property
    def queue(self) -> str:
        """The queue group, "" for a subscription that receives every message."""
        ...

    async def unsubscribe(self) -> None:
        """Stop receiving. A message already being handled finishes; queued ones are dropped."""
        ...


class Transport(Protocol):
    """A connection to the messaging fabric, used from one event loop."""

    def new_inbox(self) -> str:
        """A subject nobody else will use, for a caller to receive a reply set on."""
        ...

    async def request(
        self,
        subject: str,
        data: bytes,
        *,
        timeout: timedelta,  # noqa: ASYNC109 - expiry is reported as RequestTimeout
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        """Send one message and wait for the one reply. Raises ``NoResponders`` when nothing
        listens on ``subject``, ``RequestTimeout`` when no reply came within ``timeout`` and
        ``RemoteServiceError`` when the receiver refused the message."""
        ...

    async def publish(
        self,
        subject: str,
        data: bytes,
        *,
        reply: str = "",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Send one message without waiting; a receiver answers on ``reply``."""
        ...

    async def subscribe(self, subject: str, handler: Handler, *, queue: str = "") -> Subscription:
        """Call ``handler`` for each message on ``subject`` (which may hold the ``*`` and ``>``
        wildcards), one message at a time. Subscriptions sharing a ``queue`` on the same
        subject share its messages, each going to one of them."""
        ...

    async def close(self) -> None:
        """End every subscription of this connection; the transport is not used again."""
        ...
