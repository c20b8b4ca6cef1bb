"""Checking what a serving engine sends against the schemas: the upstream ones when they are
beside the checkout, ours otherwise."""

from __future__ import annotations

import json

from fisk_ai.a2a.codec import schema_documents
from tests.a2a.test_conformance import UPSTREAM, _upstream_documents, _validator


def assert_conforms(data: bytes) -> None:
    documents = _upstream_documents() if UPSTREAM.is_dir() else list(schema_documents().values())
    sent = json.loads(data)
    errors = [error.message for error in _validator(documents, sent["protocol"]).iter_errors(sent)]
    assert errors == [], f"{sent['protocol']}: {errors}"
