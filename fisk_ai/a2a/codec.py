"""Bytes to messages and back, checked the same way on both sides of every exchange.

Reading a message runs five gates in order: the size cap (before anything is decoded), JSON, the
protocol id (an unknown id is refused, since it decides what the message means), the JSON Schema
this package ships for that id, and the typed model. Writing runs the same schema over the
outgoing message, so a message the receiver would refuse is refused here instead.

An ``event.<kind>`` this build does not name is checked against a framing-only schema and
decodes into ``UnknownEvent`` with the peer's bytes kept, unless the sender marked it
``must_understand``, in which case it is refused like any other unknown id.

jsonschema is imported the first time a message is checked, not when this module is imported,
and each schema's references are resolved once, when its validator is built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urljoin

from pydantic import ValidationError

from fisk_ai.a2a.errors import (
    BAD_REQUEST,
    INTERNAL_ERROR,
    InvalidMessage,
    MessageTooLarge,
    UnexpectedProtocol,
    UnknownProtocol,
)
from fisk_ai.a2a.messages import Header, Message, UnknownEvent, message_type
from fisk_ai.a2a.vocabulary import EVENT_PROTOCOL_PREFIX, Direction, ProtocolId
from fisk_ai.errors import BoundedInputError
from fisk_ai.util import bounded, jsonx

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "SCHEMA_BASE",
    "decode",
    "encode",
    "schema_documents",
]

DEFAULT_MAX_MESSAGE_SIZE = 768 * 1024
SCHEMA_BASE = "https://choria.io/schemas/io.choria.fisk-ai.v1/"

_UNKNOWN_EVENT_SCHEMA = "event"
# Keywords that explain a schema without constraining anything, and those whose values hold
# subschemas (by name, in a list, or alone), which are the only places a reference can sit.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset(
    {
        "items",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "additionalProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_SHOWN_VALUE_LIMIT = 160
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


def encode(message: Message, *, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> bytes:
    """The wire form of ``message``. A message the receiver's schema would refuse, or one over
    ``max_size`` bytes, raises an ``A2AError`` with service code 500: this side failed to
    produce a valid message."""
    document = _document(message)
    try:
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (possible in model text) has no UTF-8 form; escaped, it is valid
            # JSON, and the receiver reads it as U+FFFD.
            data = json.dumps(document, separators=(",", ":"), allow_nan=False).encode("ascii")
    except (TypeError, ValueError) as error:
        raise InvalidMessage(
            f"the outgoing {message.protocol} message cannot be written as JSON: {error}",
            service_code=INTERNAL_ERROR,
        ) from None
    if len(data) > max_size:
        raise MessageTooLarge(
            f"the outgoing {message.protocol} message is {len(data)} bytes, over the "
            f"{max_size}-byte a2a message limit; shorten the text it carries",
            size=len(data),
            limit=max_size,
            service_code=INTERNAL_ERROR,
        )
    schema = _UNKNOWN_EVENT_SCHEMA if isinstance(message, UnknownEvent) else _schema_name(message)
    _check_schema(schema, document, what=f"the outgoing {message.protocol}", code=INTERNAL_ERROR)
    return data


def decode(
    data: bytes, *, direction: Direction, max_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> Message:
    """The message ``data`` holds, which must travel in ``direction``. Anything refused raises
    an ``A2AError`` with service code 400, naming what the sender must fix."""
    if len(data) > max_size:
        raise MessageTooLarge(
            f"the message is {len(data)} bytes, over the {max_size}-byte a2a message limit",
            size=len(data),
            limit=max_size,
            service_code=BAD_REQUEST,
        )
    document = _parse(data)
    protocol_text = document.get("protocol")
    if not isinstance(protocol_text, str):
        raise InvalidMessage(
            "the message is not a valid v1 message: it has no protocol string naming its kind"
        )
    protocol = _known_protocol(protocol_text)
    if protocol is None:
        return _decode_unknown_event(protocol_text, document, data, direction)
    if protocol.direction is not direction:
        raise UnexpectedProtocol(
            f"the message is a {protocol}, which is not sent "
            f"{'to an agent' if direction is Direction.TO_AGENT else 'to a caller'}"
        )
    _check_schema(protocol.name_in_namespace, document, what=f"the {protocol}", code=BAD_REQUEST)
    return cast(Message, _model(message_type(protocol), document, protocol_text))


def schema_documents() -> dict[str, dict[str, Any]]:
    """Every schema this package ships, keyed by its ``$id``."""
    return dict(_schemas())


def _document(message: Message) -> dict[str, Any]:
    dumped = message.model_dump(mode="json", exclude_defaults=True)
    dumped.pop("protocol", None)
    return {"protocol": str(message.protocol), **dumped}


def _schema_name(message: Header) -> str:
    return ProtocolId(message.protocol).name_in_namespace


def _parse(data: bytes) -> dict[str, Any]:
    try:
        # A lone surrogate escape becomes U+FFFD, as Go's encoding/json reads it; a number no
        # Go peer could have written (1e999, thousands of digits) is refused.
        document = bounded.loads_json(data, what="the message")
    except BoundedInputError as error:
        raise InvalidMessage(str(error)) from None
    if not isinstance(document, dict):
        raise InvalidMessage("the message is not a JSON object")
    return document


def _known_protocol(text: str) -> ProtocolId | None:
    try:
        return ProtocolId(text)
    except ValueError:
        return None


def _decode_unknown_event(
    protocol: str, document: dict[str, Any], data: bytes, direction: Direction
) -> UnknownEvent:
    if not protocol.startswith(EVENT_PROTOCOL_PREFIX) or document.get("must_understand") is True:
        raise UnknownProtocol(
            f"the message names protocol {_shown(protocol)}, which this agent does not speak"
        )
    if direction is not Direction.TO_CALLER:
        raise UnexpectedProtocol(
            f"the message is an event ({_shown(protocol)}), which is not sent to an agent"
        )
    _check_schema(_UNKNOWN_EVENT_SCHEMA, document, what=f"the {protocol}", code=BAD_REQUEST)
    # The peer's own "raw", if it sent one, is an unknown property like any other.
    return cast(UnknownEvent, _model(UnknownEvent, {**document, "raw": data}, protocol))


def _model(cls: type[Header], document: Mapping[str, Any], protocol: str) -> Header:
    try:
        return cls.model_validate(document)
    except ValidationError as error:
        problem = error.errors()[0]
        where = "/" + "/".join(str(part) for part in problem["loc"])
        raise InvalidMessage(
            f"the message is not a valid {protocol} message: at {where}, {problem['msg']}"
        ) from None


def _check_schema(name: str, document: dict[str, Any], *, what: str, code: int) -> None:
    from jsonschema.exceptions import best_match

    validator = _validator(name)
    chosen = best_match(validator.iter_errors(document))
    if chosen is None:
        return
    location = [str(part) for part in chosen.absolute_path]
    reason = _reason(chosen.validator, chosen.validator_value, chosen.message)
    if chosen.schema is False:
        # jsonschema reports a property refused by a false schema at the object holding it,
        # which would leave the sender guessing which property to remove.
        refused = _refused_property(validator.schema, list(chosen.absolute_schema_path), document)
        if refused:
            location.append(refused)
            reason = "this message takes no such property"
    raise InvalidMessage(
        f"{what} message is not valid against {SCHEMA_BASE}{name}.json: "
        f"at /{'/'.join(location)}, {reason}",
        service_code=code,
    )


def _reason(keyword: Any, rule: Any, message: str) -> str:
    """Why a value failed, without repeating the value: it may be long, or a conversation
    token that must not reach a log."""
    match keyword:
        case "type":
            return f"expected {' or '.join(rule) if isinstance(rule, list) else rule}"
        case "pattern":
            return f"does not match {rule}"
        case "maxLength":
            return f"is longer than {rule} characters"
        case "minLength":
            return f"is shorter than {rule} characters"
        case "minimum":
            return f"is less than {rule}"
        case "const":
            return f"must be {rule}"
        case "enum":
            return f"must be one of {', '.join(str(value) for value in rule)}"
        case "format":
            return f"is not a {rule}"
        case "required":
            return message
        case _:
            return f"fails the schema's {keyword} rule"


def _refused_property(schema: Any, schema_path: list[Any], document: dict[str, Any]) -> str:
    for step in schema_path:
        schema = schema[step]
    if not isinstance(schema, dict):
        return ""
    return next((key for key, rule in schema.items() if rule is False and key in document), "")


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_VALUE_LIMIT else text[: _SHOWN_VALUE_LIMIT - 3] + "..."


@cache
def _schemas() -> Mapping[str, dict[str, Any]]:
    from importlib import resources

    folder = resources.files("fisk_ai.a2a").joinpath("schemas")
    documents = [
        jsonx.parse(entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".json")
    ]
    return {document["$id"]: document for document in documents}


@cache
def _validator(name: str) -> Validator:
    from jsonschema import Draft202012Validator, FormatChecker

    schema_id = f"{SCHEMA_BASE}{name}.json"
    # jsonschema checks date-time only when an optional package is installed; this check
    # must not depend on what happens to be installed.
    formats = FormatChecker(formats=())
    formats.checks("date-time")(
        lambda value: not isinstance(value, str) or _RFC3339.fullmatch(value) is not None
    )
    return Draft202012Validator(_inline(_schemas()[schema_id], schema_id), format_checker=formats)


def _inline(schema: Any, base: str) -> Any:
    """``schema`` with every ``$ref`` replaced by what it points at and the prose left out.
    Following a reference on every check costs more than the rest of the check, and these
    schemas never refer to themselves."""
    if not isinstance(schema, dict):
        return schema
    inlined: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword == "$ref" or keyword in _ANNOTATIONS:
            continue
        if keyword in _SCHEMA_MAPS:
            inlined[keyword] = {name: _inline(child, base) for name, child in value.items()}
        elif keyword in _SCHEMA_LISTS:
            inlined[keyword] = [_inline(child, base) for child in value]
        elif keyword in _SCHEMA_VALUES:
            inlined[keyword] = _inline(value, base)
        else:
            inlined[keyword] = value
    reference = schema.get("$ref")
    if reference is None:
        return inlined
    document_id, _, pointer = urljoin(base, reference).partition("#")
    target: Any = _schemas()[document_id]
    for part in pointer.split("/")[1:]:
        target = target[part.replace("~1", "/").replace("~0", "~")]
    resolved = _inline(target, document_id)
    if not isinstance(resolved, dict) or resolved.keys() & inlined.keys():
        # Beside its siblings a reference is one more constraint, which is what allOf says.
        return {"allOf": [resolved], **inlined}
    return {**resolved, **inlined}
