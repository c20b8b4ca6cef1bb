"""The configuration a conversation was written under, and the gate that compares it on resume.

The fingerprint is computed byte for byte as the Go implementation computes it, so a session
journaled by either resumes in the other without --force:

- ``system_hash`` is the sha256 (hex) of Go's ``json.Marshal`` of the system prompt parts, a JSON
  array of strings in Go's encoding: compact, non-ASCII kept as UTF-8, and ``<``, ``>``, ``&``,
  U+2028 and U+2029 escaped as ``\u003c``, ``\u003e``, ``\u0026``, ``\u2028``, ``\u2029``.
- ``tools_hash`` is the sha256 of Go's ``json.Marshal`` of its ``[]ToolDef``, a struct without JSON
  tags: ``{"Name":..,"Description":..,"InputSchema":{..},"DeferLoading":false}`` per tool, in
  the order the request sends them, object keys sorted, numbers as Go prints a float64.
- ``thinking_mode`` is ``summarized`` when thinking is enabled and ``off`` otherwise (absent or
  disabled), since neither of those puts a thinking block in the conversation.

Journals written by earlier Python builds hashed differently (Python's JSON with sorted keys,
lower-case tool keys sorted by name, thinking as unset/on/off). A fingerprint computed here also
carries that legacy computation, and the resume gate compares a stored fingerprint with whichever
of the two it is closer to, so those journals resume exactly as they did before.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from fisk_ai.llm.types import ThinkingMode, ToolDef
from fisk_ai.sessions.errors import JournalError, ResumeRefused

__all__ = [
    "RESUME_ADVICE",
    "ChangeClass",
    "Fingerprint",
    "FingerprintChange",
    "FingerprintInputs",
    "ResumeAdvice",
    "ResumeDecision",
    "compare_fingerprints",
    "compute_fingerprint",
    "conversation_allowance",
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
    # The same configuration fingerprinted as earlier Python builds did; never stored, only
    # compared against (see resume_gate).
    legacy: Fingerprint | None = field(default=None, compare=False, repr=False)


class ChangeClass(enum.Enum):
    """How much a changed fingerprint field matters to a resume."""

    HARD = "hard"
    """Refused even with --force."""
    BLOCKING = "blocking"
    """Refused unless forced; forcing continues with the new value."""
    TOOLS = "tools"
    """Refused unless forced or a served conversation; either way the standing grants given
    under the old tools are dropped."""
    BUDGET = "budget"
    """Refused unless forced or a served conversation."""


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
    """Fingerprint a run's configuration as Go does. Compute it before any resume reminder is
    added to ``system``, so the reminder never reads as a changed prompt. ``tools`` must be in
    the order the model request sends them."""
    return Fingerprint(
        provider=inputs.provider,
        model=inputs.model,
        system_hash=_sha256_hex(go_json(list(inputs.system))),
        tools_hash=_sha256_hex(go_json(list(inputs.tools))),
        thinking_mode="summarized" if inputs.thinking is ThinkingMode.ON else "off",
        max_tokens=inputs.max_tokens,
        max_iterations=inputs.max_iterations,
        reasoning_effort=inputs.reasoning_effort,
        legacy=_legacy_fingerprint(inputs),
    )


def _legacy_fingerprint(inputs: FingerprintInputs) -> Fingerprint:
    """The fingerprint earlier Python builds wrote for the same configuration."""
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


@dataclass(frozen=True)
class ResumeAdvice:
    """What the resume gate's refusals tell a sender to do, in the terms of the surface it
    sent from (see ``resume_gate``)."""

    changed: str
    """After a change that force carries a conversation across."""
    never: str
    """The words ending the refusal of a changed provider, which nothing carries a
    conversation across, after "can never be resumed with <provider>"."""


RESUME_ADVICE = ResumeAdvice(
    changed="restore it, or pass --force to continue the session anyway",
    never=", not even with --force",
)
"""What the resume gate's refusal tells the operator of a command line to do."""


def resume_gate(
    stored: Fingerprint,
    current: Fingerprint,
    *,
    force: bool,
    conversation: bool = False,
    advice: ResumeAdvice = RESUME_ADVICE,
) -> ResumeDecision:
    """Decide whether a conversation fingerprinted as ``stored`` may continue under ``current``.

    A changed provider is refused outright, and any other change unless ``force``; ``advice``
    says what the sender can do, in its surface's terms. A resume forced across a change, or
    going on across a changed tool set, forgets the standing grants, since they approved calls
    under a configuration that is no longer the one asking. A served ``conversation`` goes on
    across a changed tool set or budget without being forced: its turns arrive from callers
    over the life of a deployment, and its allowance is the lowest of the budgets it was given
    (see Runner).
    """
    changes = compare_fingerprints(stored, current)
    if changes and current.legacy is not None:
        # Both computations describe the same configuration, so the closer one is the rule the
        # stored fingerprint was written by: a journal of an earlier Python build compares
        # against the legacy hashes, one written by Go or this build against Go's.
        legacy_changes = compare_fingerprints(stored, current.legacy)
        if len(legacy_changes) < len(changes):
            changes = legacy_changes
    listed = ", ".join(change.description for change in changes)
    if any(change.change_class is ChangeClass.HARD for change in changes):
        raise ResumeRefused(
            f"the session was started with llm.provider {_shown(stored.provider)} and can never "
            f"be resumed with {_shown(current.provider)}{advice.never} ({listed})"
        )
    passing = _PASSING_IN_A_CONVERSATION if conversation else frozenset[ChangeClass]()
    needs_force = any(change.change_class not in passing for change in changes)
    if not force and needs_force:
        raise ResumeRefused(
            "the agent configuration changed since the session started "
            f"({listed}); {advice.changed}"
        )
    return ResumeDecision(
        # What was approved was approved for the configuration it was asked under.
        drop_standing_grants=needs_force
        or any(change.change_class is ChangeClass.TOOLS for change in changes),
        changes=tuple(change.description for change in changes),
    )


_PASSING_IN_A_CONVERSATION = frozenset({ChangeClass.TOOLS, ChangeClass.BUDGET})


def conversation_allowance(max_tokens: int, stored: Fingerprint) -> int:
    """The token allowance of a conversation journaled under ``stored`` on a turn allowing
    ``max_tokens``: the lower of the two, since the allowance belongs to the conversation and
    a budget a caller lowered once keeps limiting it. A stored zero (a writer that kept
    none) limits nothing."""
    if 0 < stored.max_tokens < max_tokens:
        return stored.max_tokens
    return max_tokens


def fingerprint_to_json(fingerprint: Fingerprint) -> dict[str, Any]:
    # Go's field order; reasoning_effort is omitempty there, and leaving it out when unset also
    # keeps every journal that does not use it valid against the upstream schema.
    data: dict[str, Any] = {
        "provider": fingerprint.provider,
        "model": fingerprint.model,
        "system_hash": fingerprint.system_hash,
        "tools_hash": fingerprint.tools_hash,
        "thinking_mode": fingerprint.thinking_mode,
    }
    if fingerprint.reasoning_effort:
        data["reasoning_effort"] = fingerprint.reasoning_effort
    data["max_tokens"] = fingerprint.max_tokens
    data["max_iterations"] = fingerprint.max_iterations
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


def go_json(value: object) -> bytes:
    """value encoded as Go's encoding/json Marshal encodes the same data: compact, map keys
    sorted, HTML characters and U+2028/U+2029 escaped, numbers printed as float64."""
    parts: list[str] = []
    _append_go_json(parts, value)
    return "".join(parts).encode("utf-8")


def _append_go_json(parts: list[str], value: object) -> None:
    if value is None:
        parts.append("null")
    elif isinstance(value, bool):
        parts.append("true" if value else "false")
    elif isinstance(value, int | float):
        parts.append(_go_float(float(value)))
    elif isinstance(value, str):
        parts.append(_go_string(value))
    elif isinstance(value, ToolDef):
        # Go's ToolDef has no JSON tags: it marshals with its field names, in declaration order.
        parts.append(f'{{"Name":{_go_string(value.name)},')
        parts.append(f'"Description":{_go_string(value.description)},"InputSchema":')
        _append_go_json(parts, value.input_schema)
        parts.append(f',"DeferLoading":{"true" if value.defer_loading else "false"}}}')
    elif isinstance(value, Mapping):
        parts.append("{")
        for index, key in enumerate(sorted(value, key=str)):
            if index:
                parts.append(",")
            parts.append(_go_string(str(key)))
            parts.append(":")
            _append_go_json(parts, value[key])
        parts.append("}")
    elif isinstance(value, list | tuple):
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(",")
            _append_go_json(parts, item)
        parts.append("]")
    else:
        raise TypeError(f"{type(value).__name__} has no JSON form")


_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _go_string(text: str) -> str:
    # Go holds strings as UTF-8 and writes U+FFFD for what is not; a lone surrogate is the only
    # Python text with no UTF-8 form.
    text = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    encoded = json.dumps(text, ensure_ascii=False)
    for character, escape in _GO_ESCAPES.items():
        encoded = encoded.replace(character, escape)
    return encoded


def _go_float(number: float) -> str:
    """A float64 as Go's encoding/json prints it: the shortest digits that read back, in plain
    decimal between 1e-6 and 1e21 and in exponent form outside, without a trailing ".0"."""
    magnitude = abs(number)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        text = repr(number)
        mantissa, _, exponent = text.partition("e")
        sign = exponent[0]
        digits = exponent[1:].lstrip("0") or "0"
        if sign == "-" and len(digits) == 1:
            return f"{mantissa}e-{digits}"
        return f"{mantissa}e{sign}{digits.rjust(2, '0')}"
    text = format(Decimal(repr(number)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_of(value: object) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _shown(value: object) -> str:
    if value == "":
        return "(none)"
    return str(value)
