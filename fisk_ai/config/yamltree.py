"""Read YAML (JSON included) into plain values while remembering the line of every key.

The line map lets every later error name where the operator wrote the setting. Building the
values ourselves from the composed node tree is also what makes a duplicate key an error: a
plain YAML load keeps the last value silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from fisk_ai.config.errors import ConfigError

__all__ = ["Document", "KeyPath", "describe_path", "read_yaml"]

KeyPath = tuple[str | int, ...]

_MERGE_TAG = "tag:yaml.org,2002:merge"

# Aliases let a small file expand into a huge value; no real agent.yaml comes near this.
_MAX_VALUES = 100_000


@dataclass(frozen=True)
class Document:
    """The plain value of a YAML document and the line (1-based) each key and item starts on."""

    data: Any
    lines: Mapping[KeyPath, int]


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
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = error.problem or error.context or "unreadable"
        where = f"{source} line {line}" if line is not None else source
        raise ConfigError(f"{where}: not valid YAML: {problem}", line=line) from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{source}: not valid YAML: {error}") from None
    if root is None:
        return Document(data=None, lines={})
    builder = _Builder(source)
    data = builder.build(root, ())
    return Document(data=data, lines=builder.lines)


class _Builder:
    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: dict[KeyPath, int] = {}
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
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as error:
            problem = getattr(error, "problem", None) or str(error).splitlines()[0]
            where = describe_path(path)
            detail = (
                f'"{where}" cannot be read: {problem}' if where else f"cannot be read: {problem}"
            )
            raise self.fail(node.start_mark.line + 1, path, detail) from None

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
            merged = self.build(source_node, path)
            for key, value in merged.items():
                if key not in result:
                    result[key] = value
                    continue
                # The kept value's lines were overwritten by the merged value's; put them back.
                prefix = (*path, key)
                for recorded in [p for p in self.lines if p[: len(prefix)] == prefix]:
                    del self.lines[recorded]
                for recorded, line in lines_before.items():
                    if recorded[: len(prefix)] == prefix:
                        self.lines[recorded] = line
