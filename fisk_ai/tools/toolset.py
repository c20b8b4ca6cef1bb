"""The immutable set of tools a run offers the model, in one flat namespace.

A collision aborts rather than shadows: letting a later tool hide an earlier one of the same name
could strip a confirm gate from a command without anyone noticing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from fisk_ai.errors import FiskError
from fisk_ai.tools.base import Tool


class ToolCollisionError(FiskError):
    """Two tools from the run's sources share a name."""


@dataclass(frozen=True)
class ToolSource:
    """Tools from one origin, labelled the way an operator would recognise it in agent.yaml.

    Examples of labels: ``application ./ops.py``, ``memory``, ``mcp_clients "github"``.
    """

    label: str
    tools: Sequence[Tool]


class ToolSet:
    """Tools in assembly order, looked up by name. Build a new set to change it."""

    __slots__ = ("_by_name", "_order", "_source_of", "_sources")

    def __init__(self, sources: Iterable[ToolSource] = ()) -> None:
        by_name: dict[str, Tool] = {}
        source_of: dict[str, str] = {}
        order: list[Tool] = []
        kept_sources: list[ToolSource] = []
        for source in sources:
            kept_sources.append(ToolSource(source.label, tuple(source.tools)))
            for tool in source.tools:
                name = tool.name
                if name in by_name:
                    raise ToolCollisionError(
                        f'tool "{name}" from {source.label} has the same name as tool "{name}" '
                        f"from {source_of[name]}; exclude one of them or give one source an alias"
                    )
                by_name[name] = tool
                source_of[name] = source.label
                order.append(tool)
        self._by_name = by_name
        self._source_of = source_of
        self._order = tuple(order)
        self._sources = tuple(kept_sources)

    def get(self, name: str) -> Tool | None:
        return self._by_name.get(name)

    def source_of(self, name: str) -> str | None:
        """The label of the source that supplied the tool called ``name``."""
        return self._source_of.get(name)

    @property
    def sources(self) -> tuple[ToolSource, ...]:
        return self._sources

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(tool.name for tool in self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __repr__(self) -> str:
        return f"ToolSet({', '.join(self.names)})"
