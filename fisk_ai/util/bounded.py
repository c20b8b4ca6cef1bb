"""The one bounded loader for data from outside: JSON and YAML with every cap in one place.

A file, a record, a cassette, a memory note or a model's arguments may have been written by
anybody. Whatever they hold, these readers return a value or raise ``BoundedInputError`` with one
sentence naming what was read and the cap it passed: its size, its nesting, how far its aliases
expand, or a number out of range (a 5,000-digit integer, ``1e999``). Each cap is checked before
the costly work it guards, so a hostile document is refused in about the time it takes to read
it, never by exhausting memory, the stack or the clock.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fisk_ai.errors import BoundedInputError
from fisk_ai.util import jsonx
from fisk_ai.util.jsonx import Surrogates

if TYPE_CHECKING:
    from yaml.nodes import Node

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_INTEGER_DIGITS",
    "MAX_VALUES",
    "BoundedInputError",
    "Surrogates",
    "check_size",
    "check_yaml_nodes",
    "load_yaml",
    "loads_json",
]

MAX_BYTES = 16 * 1024 * 1024
"""Bytes a document may hold unless its reader sets its own cap."""

MAX_DEPTH = jsonx.MAX_DEPTH
"""Levels of lists and mappings a document may nest (see ``jsonx.MAX_DEPTH`` for why 100)."""

MAX_VALUES = 100_000
"""Values a YAML document may expand to once its aliases and merges are followed. No real
configuration or note comes near it; a few hundred bytes of nested aliases pass it by far."""

MAX_INTEGER_DIGITS = 100
"""Digits an integer may be written with. Go reads numbers as 64-bit values (20 digits); past
this, Python's own conversion becomes the cost (and past 4,300 digits, an exception)."""

_YAML_INT_TAG = "tag:yaml.org,2002:int"
_YAML_FLOAT_TAG = "tag:yaml.org,2002:float"
_YAML_INFINITIES = frozenset({".inf", ".Inf", ".INF"})


class _OutOfRange(Exception):
    """Raised inside ``json.loads`` by a number hook; not a ValueError, so the JSON reader's own
    error handling lets it through to be reported as what it is."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def loads_json(
    data: str | bytes,
    *,
    what: str,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    surrogates: Surrogates = Surrogates.REPLACE,
    parse_float: Callable[[str], Any] | None = None,
    allow_constants: bool = False,
) -> Any:
    """Decode one JSON document, or raise ``BoundedInputError`` naming ``what`` and the cap.

    ``what`` is a noun phrase the message starts with ("the session index /s/.index.json").
    ``NaN`` and ``Infinity`` are refused unless ``allow_constants``; a number written too large
    for a float (``1e999``) is refused always, since no writer means infinity by it.
    """
    check_size(data, what=what, max_bytes=max_bytes)
    float_of = parse_float or float

    def bounded_float(text: str) -> Any:
        if not math.isfinite(float(text)):
            raise _OutOfRange(f"holds the number {_excerpt(text)}, which is out of range")
        return float_of(text)

    def bounded_int(text: str) -> int:
        digits = len(text.lstrip("-"))
        if digits > MAX_INTEGER_DIGITS:
            raise _OutOfRange(
                f"holds an integer of {digits} digits, past the cap of {MAX_INTEGER_DIGITS}"
            )
        return int(text)

    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    except UnicodeDecodeError as bad:
        raise BoundedInputError(
            what,
            f"is not valid UTF-8 text (byte 0x{bad.object[bad.start]:02x} at offset {bad.start})",
        ) from None
    try:
        value = json.loads(
            text,
            parse_float=bounded_float,
            parse_int=bounded_int,
            parse_constant=None if allow_constants else _refuse_constant,
        )
    except _OutOfRange as out:
        raise BoundedInputError(what, out.problem) from None
    except RecursionError:
        raise BoundedInputError(what, _too_deep(max_depth)) from None
    except ValueError as bad:
        raise BoundedInputError(what, f"is not valid JSON ({bad})") from None
    if text.count("[") + text.count("{") > max_depth and _json_depth_exceeds(value, max_depth):
        raise BoundedInputError(what, _too_deep(max_depth))
    if surrogates is not Surrogates.KEEP and "\\u" in text and jsonx.has_lone_surrogate(value):
        if surrogates is Surrogates.REFUSE:
            raise BoundedInputError(what, "holds a lone surrogate escape, which has no UTF-8 form")
        value = jsonx.replace_lone_surrogates(value)
    return value


def load_yaml(
    data: str | bytes,
    *,
    what: str,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    max_values: int = MAX_VALUES,
) -> Any:
    """Read one YAML document with PyYAML's safe rules, or raise ``BoundedInputError``.

    The node tree is composed first and measured (nesting, values once aliases are followed,
    integer lengths, finite floats) before any value is built, so an alias bomb costs nothing.
    """
    import yaml

    check_size(data, what=what, max_bytes=max_bytes)
    loader_class: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(data, Loader=loader_class)
    except yaml.YAMLError as bad:
        first_line = str(bad).splitlines()[0] if str(bad) else "unreadable"
        raise BoundedInputError(what, f"is not valid YAML ({first_line})") from None
    if root is None:
        return None
    check_yaml_nodes(root, what=what, max_depth=max_depth, max_values=max_values)
    loader = loader_class("")
    try:
        return loader.construct_document(root)
    except yaml.YAMLError as bad:
        first_line = str(bad).splitlines()[0] if str(bad) else "unreadable"
        raise BoundedInputError(what, f"is not valid YAML ({first_line})") from None
    except (ValueError, TypeError, OverflowError) as bad:
        raise BoundedInputError(what, f"holds a value YAML cannot describe ({bad})") from None
    finally:
        loader.dispose()


def check_yaml_nodes(
    root: Node, *, what: str, max_depth: int = MAX_DEPTH, max_values: int = MAX_VALUES
) -> None:
    """Measure a composed YAML node tree as if its aliases were expanded, without expanding
    them: raise ``BoundedInputError`` if it nests past ``max_depth``, expands past
    ``max_values``, refers to itself, or holds an integer or float out of range.

    Each node is visited once (shared nodes are measured once and counted as often as they are
    referred to), so the cost is the document's size, however far it would expand.
    """
    from yaml.nodes import ScalarNode

    measured: dict[int, tuple[int, int]] = {}
    """Per node: the values it expands to and the levels it nests."""
    in_progress: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in measured:
            continue
        if isinstance(node, ScalarNode):
            _check_scalar(node, what=what)
            measured[key] = (1, 0)
            continue
        children = _yaml_children(node)
        if children_done:
            in_progress.discard(key)
            values = 1 + sum(measured[id(child)][0] for child in children)
            depth = 1 + max((measured[id(child)][1] for child in children), default=0)
            if values > max_values:
                raise BoundedInputError(
                    what, f"expands to too many values (past the cap of {max_values:,})"
                )
            if depth > max_depth:
                raise BoundedInputError(what, _too_deep(max_depth))
            measured[key] = (values, depth)
            continue
        if key in in_progress:
            raise BoundedInputError(what, "holds an alias that refers to itself")
        in_progress.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in in_progress:
                raise BoundedInputError(what, "holds an alias that refers to itself")
            if id(child) not in measured:
                stack.append((child, False))


def _yaml_children(node: Node) -> list[Node]:
    from yaml.nodes import MappingNode, SequenceNode

    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _check_scalar(node: Node, *, what: str) -> None:
    text = str(node.value)
    if node.tag == _YAML_INT_TAG:
        digits = len(text.replace("_", "").lstrip("+-"))
        if digits > MAX_INTEGER_DIGITS:
            raise BoundedInputError(
                what, f"holds an integer of {digits} digits, past the cap of {MAX_INTEGER_DIGITS}"
            )
    elif node.tag == _YAML_FLOAT_TAG and text.lstrip("+-") not in _YAML_INFINITIES:
        try:
            number = float(text.replace("_", ""))
        except ValueError:
            return
        if math.isinf(number):
            raise BoundedInputError(
                what, f"holds the number {_excerpt(text)}, which is out of range"
            )


def check_size(data: str | bytes, *, what: str, max_bytes: int = MAX_BYTES) -> None:
    """Raise ``BoundedInputError`` if ``data`` is more than ``max_bytes`` bytes (as UTF-8)."""
    if isinstance(data, str):
        # Characters never outnumber the bytes that encode them, and are at most four times fewer.
        size = len(data) if 4 * len(data) <= max_bytes else _encoded_size(data)
    else:
        size = len(data)
    if size > max_bytes:
        raise BoundedInputError(
            what, f"is {size:,} bytes, past the cap of {max_bytes:,} bytes for it"
        )


def _encoded_size(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))


def _json_depth_exceeds(value: object, limit: int) -> bool:
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _too_deep(max_depth: int) -> str:
    return f"nests deeper than {max_depth} levels"


def _excerpt(text: str) -> str:
    return text if len(text) <= 24 else text[:20] + "..."


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
