"""Every record kind we write validates against the upstream session schemas."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.sessions import Assistant, Meta, Payload, Record, encode_record
from tests.sessions.record_kinds import EVERY_KIND

SCHEMAS = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "upstream-schemas"
).resolve() / "session"

pytestmark = pytest.mark.skipif(
    not SCHEMAS.is_dir(),
    reason=f"the upstream session schemas are not beside this checkout ({SCHEMAS})",
)

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def _validator_for(protocol: str) -> Any:
    from jsonschema import Draft202012Validator, FormatChecker
    from referencing import Registry, Resource

    documents = [json.loads(path.read_text()) for path in sorted(SCHEMAS.glob("*.json"))]
    registry: Registry[Any] = Registry().with_resources(
        (document["$id"], Resource.from_contents(document)) for document in documents
    )
    kind = protocol.removeprefix("io.choria.fisk-ai.v1.session.")
    schema = next(doc for doc in documents if doc["$id"].endswith(f"/session.{kind}.json"))
    # Nothing installed here checks date-time by default, so the test brings its own.
    formats = FormatChecker()
    formats.checks("date-time")(
        lambda text: not isinstance(text, str) or bool(_RFC3339.fullmatch(text))
    )
    return Draft202012Validator(schema, registry=registry, format_checker=formats)


def _without_extensions(payload: Payload) -> Payload:
    # Our two additions are written only when set, and the upstream schemas forbid both, so
    # conformance is checked with them unset.
    if isinstance(payload, Assistant):
        return replace(payload, thinking_tokens=0)
    if isinstance(payload, Meta):
        return replace(payload, fingerprint=replace(payload.fingerprint, reasoning_effort=""))
    return payload


def _stored(payload: Payload, seq: int) -> dict[str, Any]:
    return json.loads(encode_record(Record(seq, payload)))  # type: ignore[no-any-return]


@pytest.mark.parametrize("payload", EVERY_KIND, ids=lambda payload: type(payload).__name__)
def test_every_kind_we_write_validates(payload: Payload) -> None:
    stored = _stored(_without_extensions(payload), seq=1 if isinstance(payload, Meta) else 5)
    validator = _validator_for(stored["protocol"])

    errors = [error.message for error in validator.iter_errors(stored)]

    assert errors == []


def test_the_upstream_meta_schema_refuses_reasoning_effort() -> None:
    meta = EVERY_KIND[0]
    stored = _stored(meta, seq=1)
    validator = _validator_for(stored["protocol"])

    errors = list(validator.iter_errors(stored))

    assert any("reasoning_effort" in error.message for error in errors)


def test_the_upstream_assistant_schema_refuses_thinking_tokens() -> None:
    stored = _stored(EVERY_KIND[1], seq=2)
    validator = _validator_for(stored["protocol"])

    errors = list(validator.iter_errors(stored))

    assert any("thinking_tokens" in error.message for error in errors)
