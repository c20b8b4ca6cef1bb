"""Checking what a serving engine sends against the schemas: the upstream ones when they are
beside the checkout, ours otherwise.

A message whose kind has no schema of its own is checked the way a Go receiver checks it: an
``event.<kind>`` (a text or thinking delta) against the framing schema ``event.json``, which
validates the header, the sequence number and that a block is present.
"""

from __future__ import annotations

import json
from typing import Any

from fisk_ai.a2a.codec import SCHEMA_BASE, schema_documents
from tests.a2a.upstream_schemas import UPSTREAM, upstream_documents, upstream_validator

_PROTOCOL_PREFIX = "io.choria.fisk-ai.v1."
_EVENT_FRAMING = f"{_PROTOCOL_PREFIX}event"


def schema_protocol(documents: list[dict[str, Any]], protocol: str) -> str:
    """The protocol whose schema ``protocol`` is checked against: its own when the set names
    it, the event framing for an event kind it does not name."""
    name = protocol.removeprefix(_PROTOCOL_PREFIX)
    if any(document["$id"] == f"{SCHEMA_BASE}{name}.json" for document in documents):
        return protocol
    if name.startswith("event."):
        return _EVENT_FRAMING
    raise AssertionError(f"{protocol}: no schema in the set names this kind")


def assert_conforms(data: bytes) -> None:
    documents = upstream_documents() if UPSTREAM.is_dir() else list(schema_documents().values())
    sent = json.loads(data)
    protocol = sent["protocol"]
    validator = upstream_validator(documents, schema_protocol(documents, protocol))
    errors = [error.message for error in validator.iter_errors(sent)]
    assert errors == [], f"{protocol}: {errors}"
