"""The Go original's a2a schemas, when a checkout of them is beside this one: the documents and a
validator for a protocol id."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fisk_ai.a2a.codec import SCHEMA_BASE

UPSTREAM = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "upstream-schemas"
).resolve() / "a2a"

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def upstream_validator(documents: list[dict[str, Any]], protocol: str) -> Any:
    from jsonschema import Draft202012Validator, FormatChecker
    from referencing import Registry, Resource

    registry: Registry[Any] = Registry().with_resources(
        (document["$id"], Resource.from_contents(document)) for document in documents
    )
    name = protocol.removeprefix("io.choria.fisk-ai.v1.")
    schema = next(doc for doc in documents if doc["$id"] == f"{SCHEMA_BASE}{name}.json")
    # Nothing installed here checks date-time by default, so the test brings its own.
    formats = FormatChecker()
    formats.checks("date-time")(
        lambda text: not isinstance(text, str) or bool(_RFC3339.fullmatch(text))
    )
    return Draft202012Validator(schema, registry=registry, format_checker=formats)


def upstream_documents() -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted(UPSTREAM.glob("*.json"))]
