"""The configuration a conversation was written under, and the gate that compares it on resume.

The system prompt and the tool definitions are stored as sha256 hashes of a canonical JSON form,
never verbatim. The hashes are this implementation's own; a journal written by the Go binary
hashes differently, so resuming one reports the system prompt and tool set as changed.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from fisk_ai.llm.types import ThinkingMode, ToolDef
from fisk_ai.sessions.errors import JournalError, ResumeRefused

__all__ = [
    "ChangeClass",
    "Fingerprint",
    "FingerprintChange",
    "FingerprintInputs",
    "ResumeDecision",
    "compare_fingerprints",
    "compute_fingerprint",
    "fingerprint_from_json",
    "fingerprint_to_json",
    "resume_gate",
]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Fingerprint:
    provider: str
    model: str
    system_hash: str
    tools_hash: str
    thinking_mode: str
    max_tokens: int
    max_iterations: int
    reasoning_effort: str = ""


class ChangeClass(enum.Enum):
    """How much a changed fingerprint field matters to a resume."""

    HARD = "hard"
    """Refused even with --force."""
    BLOCKING = "blocking"
    """Refused unless forced; forcing continues with the new value."""
    TOOLS = "tools"
    """Refused unless forced; forcing also drops the standing grants given under the old tools."""
    BUDGET = "budget"
    """Refused unless forced."""


@dataclass(frozen=True)
class FingerprintChange:
    field: str
    change_class: ChangeClass
    description: str


@dataclass(frozen=True)
class ResumeDecision:
    """A resume the gate allows: what changed (empty when nothing did) and whether the standing
    grants recorded in the journal must be forgotten."""

    drop_standing_grants: bool
    changes: tuple[str, ...]


@dataclass(frozen=True)
class FingerprintInputs:
    """The parts of a run's configuration that decide what the model is asked, and under what
    limits: what a fingerprint is computed from."""

    provider: str
    model: str
    system: Sequence[str]
    tools: Sequence[ToolDef]
    thinking: ThinkingMode
    reasoning_effort: str
    max_tokens: int
    max_iterations: int


def compute_fingerprint(inputs: FingerprintInputs) -> Fingerprint:
    """Fingerprint a run's configuration. Compute it before any resume reminder is added to
    ``system``, so the reminder never reads as a changed prompt."""
    return Fingerprint(
        provider=inputs.provider,
        model=inputs.model,
        system_hash=_sha256_of(list(inputs.system)),
        tools_hash=_sha256_of(_canonical_tools(inputs.tools)),
        thinking_mode=inputs.thinking.value,
        max_tokens=inputs.max_tokens,
        max_iterations=inputs.max_iterations,
        reasoning_effort=inputs.reasoning_effort,
    )


def compare_fingerprints(
    stored: Fingerprint, current: Fingerprint
) -> tuple[FingerprintChange, ...]:
    """Every field that differs, in a fixed order, each with its class and a short description."""
    changes: list[FingerprintChange] = []

    def value_changed(field: str, label: str, change_class: ChangeClass) -> None:
        before, after = getattr(stored, field), getattr(current, field)
        if before != after:
            description = f"{label}: {_shown(before)} -> {_shown(after)}"
            changes.append(FingerprintChange(field, change_class, description))

    def hash_changed(field: str, label: str, change_class: ChangeClass) -> None:
        if getattr(stored, field) != getattr(current, field):
            changes.append(FingerprintChange(field, change_class, f"{label}: changed"))

    value_changed("provider", "provider", ChangeClass.HARD)
    value_changed("model", "model", ChangeClass.BLOCKING)
    hash_changed("system_hash", "system prompt", ChangeClass.BLOCKING)
    value_changed("thinking_mode", "thinking", ChangeClass.BLOCKING)
    value_changed("reasoning_effort", "reasoning_effort", ChangeClass.BLOCKING)
    hash_changed("tools_hash", "tool set", ChangeClass.TOOLS)
    value_changed("max_tokens", "max_tokens", ChangeClass.BUDGET)
    value_changed("max_iterations", "max_iterations", ChangeClass.BUDGET)
    return tuple(changes)


def resume_gate(stored: Fingerprint, current: Fingerprint, *, force: bool) -> ResumeDecision:
    """Decide whether a conversation fingerprinted as ``stored`` may continue under ``current``.

    A changed provider is refused outright. Any other change is refused unless ``force``; a
    forced resume across a changed tool set forgets the standing grants, since they approved
    tools that may no longer be the same.
    """
    changes = compare_fingerprints(stored, current)
    listed = ", ".join(change.description for change in changes)
    if any(change.change_class is ChangeClass.HARD for change in changes):
        raise ResumeRefused(
            f"the session was started with llm.provider {_shown(stored.provider)} and can never "
            f"be resumed with {_shown(current.provider)}, not even with --force ({listed})"
        )
    if changes and not force:
        raise ResumeRefused(
            f"the agent configuration changed since the session started ({listed}); "
            "restore it, or pass --force to continue the session anyway"
        )
    return ResumeDecision(
        drop_standing_grants=any(change.change_class is ChangeClass.TOOLS for change in changes),
        changes=tuple(change.description for change in changes),
    )


def fingerprint_to_json(fingerprint: Fingerprint) -> dict[str, Any]:
    data: dict[str, Any] = {
        "provider": fingerprint.provider,
        "model": fingerprint.model,
        "system_hash": fingerprint.system_hash,
        "tools_hash": fingerprint.tools_hash,
        "thinking_mode": fingerprint.thinking_mode,
        "max_tokens": fingerprint.max_tokens,
        "max_iterations": fingerprint.max_iterations,
    }
    # The upstream fingerprint schema has no reasoning_effort; leaving it out when unset keeps
    # every journal that does not use it valid against that schema.
    if fingerprint.reasoning_effort:
        data["reasoning_effort"] = fingerprint.reasoning_effort
    return data


def fingerprint_from_json(data: object) -> Fingerprint:
    """Read a stored fingerprint; a missing field reads as empty, as the Go writer's zero value."""
    if not isinstance(data, Mapping):
        raise JournalError("the meta record's fingerprint is not an object")
    return Fingerprint(
        provider=_field(data, "provider", str, ""),
        model=_field(data, "model", str, ""),
        system_hash=_field(data, "system_hash", str, ""),
        tools_hash=_field(data, "tools_hash", str, ""),
        thinking_mode=_field(data, "thinking_mode", str, ""),
        max_tokens=_field(data, "max_tokens", int, 0),
        max_iterations=_field(data, "max_iterations", int, 0),
        reasoning_effort=_field(data, "reasoning_effort", str, ""),
    )


def _field(data: Mapping[str, Any], key: str, kind: type[_T], default: _T) -> _T:
    value = data.get(key, default)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise JournalError(f"the fingerprint's {key} must be {_kind_name(kind)}")
    return value


def _kind_name(kind: type) -> str:
    return "an integer" if kind is int else "a string"


def _canonical_tools(tools: Sequence[ToolDef]) -> list[dict[str, Any]]:
    # Sorted by name: the order tools are assembled in (MCP servers, peers) is not meaningful,
    # and must not make an unchanged tool set look changed.
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema,
            "defer_loading": tool.defer_loading,
        }
        for tool in sorted(tools, key=lambda tool: tool.name)
    ]


def _sha256_of(value: object) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _shown(value: object) -> str:
    if value == "":
        return "(none)"
    return str(value)
