"""HOST. The a2a v1 protocol: messages, validation, the clients and the transports. The engines
serving it live in ``fisk_ai.serve``, which this package never imports."""

from fisk_ai.a2a.codec import DEFAULT_MAX_MESSAGE_SIZE, SCHEMA_BASE, decode, encode
from fisk_ai.a2a.errors import (
    A2AError,
    InvalidMessage,
    MessageTooLarge,
    NoResponders,
    RemoteServiceError,
    RequestTimeout,
    TransportClosed,
    UnexpectedProtocol,
    UnknownProtocol,
)
from fisk_ai.a2a.events import event_from_message, event_message
from fisk_ai.a2a.in_process import InProcessBroker, InProcessTransport
from fisk_ai.a2a.messages import Header, Identity, Message, UnknownEvent, new_request, reply_to
from fisk_ai.a2a.prompts_client import PromptsClient, TurnOptions
from fisk_ai.a2a.transport import (
    Delivery,
    Handler,
    Subscription,
    Transport,
    cancel_subject,
    discovery_subject,
    elicit_subject,
    reply_failure,
    service_error_headers,
    task_subject,
    tool_subject,
)
from fisk_ai.a2a.vocabulary import Direction, ErrorCode, ProtocolId, StopReason

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "SCHEMA_BASE",
    "A2AError",
    "Delivery",
    "Direction",
    "ErrorCode",
    "Handler",
    "Header",
    "Identity",
    "InProcessBroker",
    "InProcessTransport",
    "InvalidMessage",
    "Message",
    "MessageTooLarge",
    "NoResponders",
    "PromptsClient",
    "ProtocolId",
    "RemoteServiceError",
    "RequestTimeout",
    "StopReason",
    "Subscription",
    "Transport",
    "TransportClosed",
    "TurnOptions",
    "UnexpectedProtocol",
    "UnknownEvent",
    "UnknownProtocol",
    "cancel_subject",
    "decode",
    "discovery_subject",
    "elicit_subject",
    "encode",
    "event_from_message",
    "event_message",
    "new_request",
    "reply_failure",
    "reply_to",
    "service_error_headers",
    "task_subject",
    "tool_subject",
]
