"""The one JSON reader: bounded and total.

Every document fisk-ai reads from outside (a journal line, an a2a message, an application's
introspection, a cassette, a model's tool arguments) goes through ``parse``. Whatever the input,
it returns a value or raises ``JsonError`` with a sentence fragment saying what is wrong: deep
nesting never reaches a ``RecursionError`` in a later reader, bytes that are not UTF-8 never
escape as ``UnicodeDecodeError``, and a lone surrogate escape (``\\ud800``), which is valid JSON
but has no UTF-8 form, is kept, replaced or refused as the caller asks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from enum import Enum
from typing import Any

MAX_DEPTH = 100
"""Levels of arrays and objects a document may nest. Deep enough for any real document, and
shallow enough that every later recursive reader (schema checks, pydantic, json.dumps) stays
well inside Python's recursion limit."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


class JsonError(ValueError):
    """A document that cannot be read. The message completes "the <thing> ...": for example
    ``is not valid JSON (...)`` or ``nests deeper than 100 levels``."""


class Surrogates(Enum):
    """What to do with a lone surrogate escape such as ``\\ud800``."""

    KEEP = "keep"
    """Keep it; the caller escapes it again on the way out (journals do)."""
    REPLACE = "replace"
    """Replace it with U+FFFD, as Go's encoding/json does."""
    REFUSE = "refuse"
    """Refuse the document."""


def parse(
    data: bytes | str,
    *,
    max_depth: int = MAX_DEPTH,
    surrogates: Surrogates = Surrogates.REPLACE,
    parse_float: Callable[[str], Any] | None = None,
    refuse_constants: bool = True,
) -> Any:
    """Decode one JSON document, or raise ``JsonError``.

    ``NaN`` and ``Infinity`` are not JSON and are refused unless ``refuse_constants`` is off.
    """
    text = _text(data)
    try:
        value = json.loads(
            text,
            parse_float=parse_float,
            parse_constant=_refuse_constant if refuse_constants else None,
        )
    except RecursionError:
        raise JsonError(f"nests deeper than {max_depth} levels") from None
    except ValueError as bad:
        raise JsonError(f"is not valid JSON ({bad})") from None
    if text.count("[") + text.count("{") > max_depth and _depth_exceeds(value, max_depth):
        raise JsonError(f"nests deeper than {max_depth} levels")
    if surrogates is not Surrogates.KEEP and _SURROGATE_ESCAPE.search(text):
        if surrogates is Surrogates.REFUSE:
            if has_lone_surrogate(value):
                raise JsonError("holds a lone surrogate escape, which has no UTF-8 form")
        else:
            value = replace_lone_surrogates(value)
    return value


def has_lone_surrogate(value: object) -> bool:
    """Whether any string in ``value`` (keys included) holds a lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def replace_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {replace_lone_surrogates(k): replace_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_lone_surrogates(item) for item in value]
    if isinstance(value, tuple):
        return tuple(replace_lone_surrogates(item) for item in value)
    return value


def _text(data: bytes | str) -> str:
    if isinstance(data, str):
        return data
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as bad:
        raise JsonError(
            f"is not valid UTF-8 text (byte 0x{bad.object[bad.start]:02x} at offset {bad.start})"
        ) from None


def _depth_exceeds(value: object, limit: int) -> bool:
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: list[Any] | Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
