"""Which tools a run exposes: ``ai:deny`` first, then include, then exclude.

The rule is shared by every consumer of a filter (the top-level include/exclude, the serving
surfaces' ``expose.agent.tools``, remote tool imports), so it lives here once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from fisk_ai.errors import FiskError
from fisk_ai.tools.tags import DENY


class ToolSelectionError(FiskError):
    """A tool filter could not be applied."""


@dataclass(frozen=True)
class ToolFilter:
    """Tool name patterns (unanchored regular expressions) and exact tags.

    A tool matches when any pattern is found in its name or any listed tag is one of its tags.
    The empty tag matches a tool that has no tags at all.
    """

    tools: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.tools and not self.tags

    def matches(self, name: str, tags: Sequence[str]) -> bool:
        if any(_compiled(pattern).search(name) for pattern in self.tools):
            return True
        for wanted in self.tags:
            if wanted == "":
                if not tags:
                    return True
            elif wanted in tags:
                return True
        return False


class Selectable(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def tags(self) -> Sequence[str]: ...


SelectableT = TypeVar("SelectableT", bound=Selectable)


def is_selected(
    name: str,
    tags: Sequence[str],
    *,
    include: ToolFilter | None = None,
    exclude: ToolFilter | None = None,
) -> bool:
    """Whether a tool survives selection. ``ai:deny`` removes it before any filter is consulted."""
    if DENY in tags:
        return False
    if include is not None and not include.is_empty and not include.matches(name, tags):
        return False
    return exclude is None or not exclude.matches(name, tags)


def select_tools(
    tools: Iterable[SelectableT],
    *,
    include: ToolFilter | None = None,
    exclude: ToolFilter | None = None,
) -> list[SelectableT]:
    """The tools that survive selection, in their original order."""
    return [
        tool
        for tool in tools
        if is_selected(tool.name, tool.tags, include=include, exclude=exclude)
    ]


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ToolSelectionError(
            f"the tool pattern {pattern!r} is not a valid regular expression ({exc}); "
            "fix it under include.tools or exclude.tools"
        ) from None
