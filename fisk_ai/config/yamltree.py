"""Read YAML (JSON included) into plain values while remembering the line of every key.

The line map lets every later error name where the operator wrote the setting. Building the
values ourselves from the composed node tree is also what makes a duplicate key an error: a
plain YAML load keeps the last value silently.

Plain scalars are resolved as the Go implementation's YAML library (goccy/go-yaml, a YAML 1.2
reader) resolves them, not as PyYAML's YAML 1.1 rules would: only true/false (in any of three
spellings) are booleans, so "off", "on", "yes" and "no" are text; dates are text; numbers are
decimal, 0x, 0o, 0b or leading-zero octal, with "_" allowed between digits, and a float has exactly
one ".". A plain scalar that resolved to a boolean or a number keeps the text it was written as in
Document.texts, so a key whose field is text reads what the operator wrote, as Go's loader does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.reader import ReaderError

from fisk_ai.config.errors import ConfigError
from fisk_ai.util import bounded
from fisk_ai.util.sanitize import single_line

__all__ = ["Document", "KeyPath", "describe_path", "read_yaml"]

KeyPath = tuple[str | int, ...]

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Composes nodes with no YAML 1.1 implicit types: every plain scalar arrives tagged as text
    (or as the tag written on it), and _resolve_plain decides what it is, as Go's reader would.
    The "<<" merge key is the one implicit resolution kept."""

    yaml_implicit_resolvers: ClassVar[dict[str | None, list[tuple[str, re.Pattern[str]]]]] = {}


_Loader.add_implicit_resolver(_MERGE_TAG, re.compile(r"^(?:<<)$"), ["<"])

_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_BOOLEANS = {"true": True, "True": True, "TRUE": True}
_BOOLEANS.update({"false": False, "False": False, "FALSE": False})
_SPECIAL_FLOATS = {
    ".inf": float("inf"),
    ".Inf": float("inf"),
    ".INF": float("inf"),
    "-.inf": float("-inf"),
    "-.Inf": float("-inf"),
    "-.INF": float("-inf"),
    ".nan": float("nan"),
    ".NaN": float("nan"),
    ".NAN": float("nan"),
}
_DIGITS_OF_BASE = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}
_FLOAT = re.compile(r"[0-9]*\.[0-9]*(?:[eE][-+]?[0-9]+)?")
_INT64 = 2**63
_INT64_DIGITS = {2: 64, 8: 22, 10: 20, 16: 16}
"""The most digits an unsigned 64-bit value has in each base."""


def _resolve_plain(text: str) -> Any:
    """What an unquoted, untagged scalar is: None, a bool, an int, a float, or the text itself."""
    if text in _NULLS:
        return None
    if text in _BOOLEANS:
        return _BOOLEANS[text]
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    number = _resolve_number(text)
    return text if number is None else number


def _resolve_number(text: str) -> int | float | None:
    if text.startswith("_") or text.count(".") > 1:
        return None
    negative = text.startswith("-")
    digits = text.removeprefix("+").removeprefix("-").replace("_", "")
    if not digits:
        return None
    if "." in digits:
        if not _FLOAT.fullmatch(digits) or not any(c.isdigit() for c in digits.split("e")[0]):
            return None
        value = float(digits)
        return -value if negative else value
    base = 10
    for prefix, prefix_base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if digits.startswith(prefix):
            digits, base = digits[len(prefix) :], prefix_base
            break
    else:
        if digits.startswith("0") and len(digits) > 1:
            base = 8
    if not digits or any(c not in _DIGITS_OF_BASE[base] for c in digits):
        return None
    # Out of a 64-bit range Go's reader keeps the scalar as text; a run of digits longer than
    # any 64-bit value is known to be out of it before Python converts it (which, for a few
    # thousand decimal digits, costs time and then raises).
    if len(digits.lstrip("0")) > _INT64_DIGITS[base]:
        return None
    magnitude = int(digits, base)
    if (negative and magnitude > _INT64) or (not negative and magnitude >= 2 * _INT64):
        return None
    return -magnitude if negative else magnitude


# Aliases let a small file expand into a huge value; no real agent.yaml comes near this.
_MAX_VALUES = bounded.MAX_VALUES

MAX_DOCUMENT_BYTES = 1024 * 1024
"""The largest agent.yaml read: far past any real one (a long system prompt is a few KB), and
small enough that every later step (regular expressions, references) stays quick."""


@dataclass(frozen=True)
class Document:
    """The plain value of a YAML document, the line (1-based) each key and item starts on, and
    the text as written of every unquoted scalar that resolved to a boolean or a number."""

    data: Any
    lines: Mapping[KeyPath, int]
    texts: Mapping[KeyPath, str] = field(default_factory=dict)


def describe_path(path: KeyPath) -> str:
    """A key path as the operator reads it: harness.memory.options, include.tools[2]."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def read_yaml(text: str, *, source: str) -> Document:
    """Compose text as one YAML document; syntax errors and duplicate keys are ConfigErrors."""
    try:
        bounded.check_size(text, what=source, max_bytes=MAX_DOCUMENT_BYTES)
    except bounded.BoundedInputError as refused:
        raise ConfigError(str(refused)) from None
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = error.problem or error.context or "unreadable"
        where = f"{source} line {line}" if line is not None else source
        raise ConfigError(f"{where}: not valid YAML: {problem}", line=line) from None
    except ReaderError as error:
        # A character YAML refuses (a control character): one line, with where it is.
        line = text.count("\n", 0, error.position) + 1
        character = error.character
        code = ord(character) if isinstance(character, str) else int(character)
        raise ConfigError(
            f"{source} line {line}: not valid YAML: {error.reason} (character #x{code:04x})",
            line=line,
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{source}: not valid YAML: {single_line(str(error))}") from None
    if root is None:
        return Document(data=None, lines={})
    try:
        # Measured before anything is built: a chain of merges or aliases is refused in the
        # time it takes to read it, not after expanding it.
        bounded.check_yaml_nodes(root, what=source, max_values=_MAX_VALUES)
    except bounded.BoundedInputError as refused:
        raise ConfigError(str(refused)) from None
    builder = _Builder(source)
    data = builder.build(root, ())
    return Document(data=data, lines=builder.lines, texts=builder.texts)


class _Builder:
    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: dict[KeyPath, int] = {}
        self.texts: dict[KeyPath, str] = {}
        self.constructor = SafeConstructor()
        self.active: set[int] = set()
        self.count = 0

    def fail(self, line: int, path: KeyPath, detail: str) -> ConfigError:
        return ConfigError(
            f"{self.source} line {line}: {detail}", key=describe_path(path) or None, line=line
        )

    def build(self, node: Node, path: KeyPath) -> Any:
        self.count += 1
        if self.count > _MAX_VALUES:
            raise self.fail(
                node.start_mark.line + 1, path, "the document expands to too many values"
            )
        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        if id(node) in self.active:
            raise self.fail(node.start_mark.line + 1, path, "an alias refers to itself")
        self.active.add(id(node))
        try:
            if isinstance(node, MappingNode):
                return self.mapping(node, path)
            if isinstance(node, SequenceNode):
                items: list[Any] = []
                for index, item in enumerate(node.value):
                    self.lines[(*path, index)] = item.start_mark.line + 1
                    items.append(self.build(item, (*path, index)))
                return items
        finally:
            self.active.discard(id(node))
        raise self.fail(node.start_mark.line + 1, path, "holds a value YAML cannot describe")

    def scalar(self, node: ScalarNode, path: KeyPath) -> Any:
        # A plain scalar has no style: None from the pure-Python parser, "" from the C one.
        if node.tag == _STR_TAG and not node.style:
            value = _resolve_plain(node.value)
            if value is not None and not isinstance(value, str):
                self.texts[path] = node.value
            return value
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as error:
            problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        except Exception:
            # PyYAML's constructors raise whatever their parsers raise for an explicit tag on a
            # value it cannot take: !!int x, !!int "", !!bool maybe, !!timestamp 2020-13-45.
            tag = node.tag.removeprefix("tag:yaml.org,2002:")
            problem = f'"{single_line(node.value, 40)}" is not a valid !!{single_line(tag, 40)}'
        where = describe_path(path)
        detail = f'"{where}" cannot be read: {problem}' if where else f"cannot be read: {problem}"
        raise self.fail(node.start_mark.line + 1, path, detail)

    def mapping(self, node: MappingNode, path: KeyPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_lines: dict[str, int] = {}
        merges: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merges.append(value_node)
                continue
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, ScalarNode):
                raise self.fail(line, path, "a key must be plain text, not a list or a mapping")
            # The key as written: YAML would read "on:" as true and "1:" as a number.
            key = str(key_node.value)
            child = (*path, key)
            if key in first_lines:
                raise self.fail(
                    line,
                    child,
                    f'duplicate key "{describe_path(child)}" (first written on line '
                    f"{first_lines[key]})",
                )
            first_lines[key] = line
            self.lines[child] = line
            result[key] = self.build(value_node, child)
        for merge in merges:
            self.merge_into(result, merge, path)
        return result

    def merge_into(self, result: dict[str, Any], merge: Node, path: KeyPath) -> None:
        """Apply a "<<" merge: keys written in the mapping itself win over merged ones."""
        sources = merge.value if isinstance(merge, SequenceNode) else [merge]
        for source_node in sources:
            if not isinstance(source_node, MappingNode):
                raise self.fail(
                    source_node.start_mark.line + 1, path, 'a "<<" merge must name a mapping'
                )
            lines_before = dict(self.lines)
            texts_before = dict(self.texts)
            merged = self.build(source_node, path)
            for key, value in merged.items():
                if key not in result:
                    result[key] = value
                    continue
                # The kept value's lines and texts were overwritten by the merged value's; put
                # them back.
                prefix = (*path, key)
                _restore_under(prefix, self.lines, lines_before)
                _restore_under(prefix, self.texts, texts_before)


_V = TypeVar("_V")


def _restore_under(prefix: KeyPath, recorded: dict[KeyPath, _V], before: dict[KeyPath, _V]) -> None:
    """Put back what was recorded under prefix before a merge overwrote it."""
    for path in [path for path in recorded if path[: len(prefix)] == prefix]:
        del recorded[path]
    for path, item in before.items():
        if path[: len(prefix)] == prefix:
            recorded[path] = item
