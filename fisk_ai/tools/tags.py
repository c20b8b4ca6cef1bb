"""The reserved ``ai:`` tag vocabulary and the resolution of behaviour tags.

``ai:deny``, ``ai:no_defer`` and ``ai:confirm`` change what the harness does. The behaviour tags
only describe a command. They come from a binary the operator often cannot edit, so a conflict is
resolved conservatively and reported as a warning, never as an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

RESERVED_PREFIX = "ai:"

DENY = "ai:deny"
NO_DEFER = "ai:no_defer"
CONFIRM = "ai:confirm"
READ_ONLY = "ai:read_only"
DESTRUCTIVE = "ai:destructive"
ADDITIVE = "ai:additive"
IDEMPOTENT = "ai:idempotent"

BEHAVIOR_TAGS = frozenset({READ_ONLY, DESTRUCTIVE, ADDITIVE, IDEMPOTENT})
RESERVED_TAGS = frozenset({DENY, NO_DEFER, CONFIRM}) | BEHAVIOR_TAGS


@dataclass(frozen=True)
class Behavior:
    """What a tool says about its effect, after conflicts are resolved.

    All false means nothing is known, which consumers must treat as possibly destructive.
    """

    read_only: bool = False
    destructive: bool = False
    additive: bool = False
    idempotent: bool = False


@dataclass(frozen=True)
class TagReport:
    """The resolved behaviour of one tool and the warnings its tags deserve."""

    behavior: Behavior
    warnings: tuple[str, ...]


def inspect_tags(tool_name: str, tags: Sequence[str]) -> TagReport:
    """Resolve the behaviour tags of ``tool_name`` and warn about conflicts and unknown ai: tags.

    Resolution looks at the whole set at once, so the order the tags were declared in never
    changes the result.
    """
    present = set(tags)
    warnings: list[str] = []

    for tag in _unique(tags):
        if tag.startswith(RESERVED_PREFIX) and tag not in RESERVED_TAGS:
            warnings.append(f'tool "{tool_name}" has the unknown tag "{tag}", which has no effect')

    read_only = READ_ONLY in present
    destructive = DESTRUCTIVE in present
    additive = ADDITIVE in present

    if read_only and destructive:
        warnings.append(
            f'tool "{tool_name}" is tagged both {READ_ONLY} and {DESTRUCTIVE}; '
            "it is treated as destructive, not read-only"
        )
    if read_only and additive:
        warnings.append(
            f'tool "{tool_name}" is tagged both {READ_ONLY} and {ADDITIVE}; '
            "it is treated as writing, not read-only"
        )
    if destructive and additive:
        warnings.append(
            f'tool "{tool_name}" is tagged both {DESTRUCTIVE} and {ADDITIVE}; '
            "it is treated as destructive"
        )

    behavior = Behavior(
        read_only=read_only and not (destructive or additive),
        destructive=destructive,
        additive=additive and not destructive,
        idempotent=IDEMPOTENT in present,
    )
    return TagReport(behavior=behavior, warnings=tuple(warnings))


def _unique(tags: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(tags))
