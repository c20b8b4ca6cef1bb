"""Every message kind we emit validates against the upstream a2a schemas, and against ours."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fisk_ai.a2a.codec import SCHEMA_BASE, encode, schema_documents
from fisk_ai.a2a.messages import Message
from fisk_ai.a2a.vocabulary import ProtocolId
from tests.a2a.samples import EVERY_MESSAGE, message_id
from tests.a2a.upstream_schemas import UPSTREAM, upstream_documents, upstream_validator

needs_upstream = pytest.mark.skipif(
    not UPSTREAM.is_dir(),
    reason=f"the upstream a2a schemas are not beside this checkout ({UPSTREAM})",
)


def _errors(documents: list[dict[str, Any]], message: Message) -> list[str]:
    sent = json.loads(encode(message))
    validator = upstream_validator(documents, sent["protocol"])
    return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(sent)]


@needs_upstream
@pytest.mark.parametrize("message", EVERY_MESSAGE, ids=message_id)
def test_every_kind_we_emit_validates_against_the_upstream_schemas(message: Message) -> None:
    assert _errors(upstream_documents(), message) == []


@pytest.mark.parametrize("message", EVERY_MESSAGE, ids=message_id)
def test_every_kind_we_emit_validates_against_our_schemas(message: Message) -> None:
    assert _errors(list(schema_documents().values()), message) == []


def test_the_samples_cover_every_protocol_id() -> None:
    assert {message.protocol for message in EVERY_MESSAGE} == set(ProtocolId)


def test_we_ship_one_schema_per_protocol_id_plus_common_and_the_event_fallback() -> None:
    shipped = set(schema_documents())

    expected = {f"{SCHEMA_BASE}{protocol.name_in_namespace}.json" for protocol in ProtocolId}
    expected |= {f"{SCHEMA_BASE}common.json", f"{SCHEMA_BASE}event.json"}
    assert shipped == expected


@needs_upstream
def test_our_schema_ids_are_the_ones_a_go_peer_resolves() -> None:
    upstream_ids = {document["$id"] for document in upstream_documents()}

    assert set(schema_documents()) == upstream_ids


def test_every_shipped_schema_is_a_valid_draft_2020_12_schema() -> None:
    from jsonschema import Draft202012Validator

    for document in schema_documents().values():
        Draft202012Validator.check_schema(document)
