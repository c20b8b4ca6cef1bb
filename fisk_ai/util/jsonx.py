"""The one JSON reader: bounded and total.

Every document fisk-ai reads from outside (a journal line, an a2a message, an application's
introspection, a cassette, a model's tool arguments) goes through ``parse``. Whatever the input,
it returns a value or raises ``JsonError`` with a sentence fragment saying what is wrong: deep
nesting never reaches a ``RecursionError`` in a later reader, bytes that are not UTF-8 never
escape as ``UnicodeDecodeError``, and a lone surrogate escape (``\\ud800``), which is valid JSON
but has no UTF-8 form, is kept, replaced or refused as the caller asks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from typing import Any

MAX_DEPTH = 100
"""Levels of arrays and objects a document may nest. Deep enough for any real document, and
shallow enough that every later recursive reader (schema checks, pydantic, json.dumps) stays
well inside Python's recursion limit."""

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
    """Decode one JSON document, or raise ``JsonError``: ``bounded.loads_json`` under the
    name and error these readers know, with the same caps (size, nesting, a number out of
    range such as ``1e999`` or a 5,000-digit integer).

    ``NaN`` and ``Infinity`` are not JSON and are refused unless ``refuse_constants`` is off.
    """
    # bounded builds on this module's surrogate helpers, so it is imported where it is used.
    from fisk_ai.errors import BoundedInputError
    from fisk_ai.util.bounded import loads_json

    try:
        return loads_json(
            data,
            what="the document",
            max_depth=max_depth,
            surrogates=surrogates,
            parse_float=parse_float,
            allow_constants=not refuse_constants,
        )
    except BoundedInputError as bad:
        raise JsonError(bad.problem) from None


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
