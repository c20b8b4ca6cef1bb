from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import pytest

from fisk_ai.llm.types import ThinkingMode, ToolDef
from fisk_ai.sessions import (
    ChangeClass,
    Fingerprint,
    ResumeDecision,
    ResumeRefused,
    compare_fingerprints,
    compute_fingerprint,
    resume_gate,
)
from fisk_ai.sessions.fingerprint import FingerprintInputs, ResumeAdvice, conversation_allowance

LIST = ToolDef("stream_ls", "List streams", {"type": "object", "properties": {}})
REMOVE = ToolDef(
    "stream_rm",
    "Remove a stream",
    {"type": "object", "properties": {"stream": {"type": "string"}}, "required": ["stream"]},
)


INPUTS = FingerprintInputs(
    provider="anthropic",
    model="claude-sonnet",
    system=("You operate NATS.", "Be brief."),
    tools=(LIST, REMOVE),
    thinking=ThinkingMode.UNSET,
    reasoning_effort="",
    max_tokens=500000,
    max_iterations=50,
)


def computed(**changes: Any) -> Fingerprint:
    return compute_fingerprint(replace(INPUTS, **changes))


def test_the_same_configuration_fingerprints_the_same() -> None:
    assert computed() == computed()


def test_hashes_are_sha256_hex() -> None:
    fingerprint = computed()

    assert len(fingerprint.system_hash) == 64
    assert len(fingerprint.tools_hash) == 64
    int(fingerprint.tools_hash, 16)


def test_tools_are_hashed_in_request_order_as_go_hashes_them() -> None:
    assert computed(tools=[REMOVE, LIST]).tools_hash != computed().tools_hash


def test_the_system_hash_is_of_go_json_with_html_characters_escaped() -> None:
    fingerprint = computed(system=["a <b> & c", "é\n"])
    expected = b'["a \\u003cb\\u003e \\u0026 c","\xc3\xa9\\n"]'
    assert fingerprint.system_hash == hashlib.sha256(expected).hexdigest()


def test_the_tools_hash_is_of_go_tooldef_structs_in_field_order() -> None:
    tool = ToolDef("t", "x > y", {"type": "object", "maximum": 10.0, "a": [1, 2.5, True, None]})
    expected = (
        b'[{"Name":"t","Description":"x \\u003e y",'
        b'"InputSchema":{"a":[1,2.5,true,null],"maximum":10,"type":"object"},'
        b'"DeferLoading":false}]'
    )
    assert computed(tools=[tool]).tools_hash == hashlib.sha256(expected).hexdigest()


def test_no_tools_hash_as_an_empty_array() -> None:
    assert computed(tools=[]).tools_hash == hashlib.sha256(b"[]").hexdigest()


def test_a_legacy_python_fingerprint_still_resumes_without_force() -> None:
    current = computed()
    assert current.legacy is not None
    legacy = replace(current.legacy)
    decision = resume_gate(legacy, current, force=False)
    assert decision.changes == ()


def test_a_legacy_fingerprint_reports_only_what_changed() -> None:
    stored = computed().legacy
    assert stored is not None
    with pytest.raises(ResumeRefused) as caught:
        resume_gate(stored, computed(model="claude-opus"), force=False)
    assert "model: claude-sonnet -> claude-opus" in str(caught.value)
    assert "system prompt" not in str(caught.value)


def test_the_key_order_of_a_schema_does_not_matter() -> None:
    reordered = replace(
        REMOVE,
        input_schema={
            "required": ["stream"],
            "properties": {"stream": {"type": "string"}},
            "type": "object",
        },
    )

    assert computed(tools=[LIST, reordered]).tools_hash == computed().tools_hash


@pytest.mark.parametrize(
    "changed",
    [
        replace(REMOVE, description="Delete a stream"),
        replace(REMOVE, input_schema={"type": "object"}),
        replace(REMOVE, defer_loading=True),
        replace(REMOVE, name="stream_delete"),
    ],
    ids=["description", "schema", "defer flag", "name"],
)
def test_any_change_to_a_tool_changes_the_tools_hash(changed: ToolDef) -> None:
    assert computed(tools=[LIST, changed]).tools_hash != computed().tools_hash


def test_a_changed_system_part_changes_the_system_hash() -> None:
    assert computed(system=["You operate NATS."]).system_hash != computed().system_hash


@pytest.mark.parametrize(
    ("thinking", "spelled"),
    [(ThinkingMode.UNSET, "off"), (ThinkingMode.ON, "summarized"), (ThinkingMode.OFF, "off")],
)
def test_thinking_is_spelled_as_go_spells_it(thinking: ThinkingMode, spelled: str) -> None:
    assert computed(thinking=thinking).thinking_mode == spelled


@pytest.mark.parametrize(
    ("field", "value", "change_class"),
    [
        ("provider", "openai", ChangeClass.HARD),
        ("model", "claude-opus", ChangeClass.BLOCKING),
        ("system_hash", "c" * 64, ChangeClass.BLOCKING),
        ("thinking_mode", "on", ChangeClass.BLOCKING),
        ("reasoning_effort", "high", ChangeClass.BLOCKING),
        ("tools_hash", "d" * 64, ChangeClass.TOOLS),
        ("max_tokens", 1000, ChangeClass.BUDGET),
        ("max_iterations", 5, ChangeClass.BUDGET),
    ],
)
def test_each_field_has_its_class(field: str, value: object, change_class: ChangeClass) -> None:
    stored = computed()

    changes = compare_fingerprints(stored, replace(stored, **{field: value}))  # type: ignore[arg-type]

    assert [(change.field, change.change_class) for change in changes] == [(field, change_class)]


def test_an_unchanged_configuration_resumes_with_nothing_to_report() -> None:
    assert resume_gate(computed(), computed(), force=False) == ResumeDecision(False, ())


def test_a_changed_provider_is_refused_even_with_force() -> None:
    stored = computed()

    with pytest.raises(ResumeRefused, match="can never be resumed with openai, not even with"):
        resume_gate(stored, replace(stored, provider="openai"), force=True)


def test_a_changed_model_is_refused_naming_both_and_the_override() -> None:
    with pytest.raises(ResumeRefused, match=r"model: claude-sonnet -> claude-opus.*--force"):
        resume_gate(computed(), computed(model="claude-opus"), force=False)


def test_every_change_is_listed_in_one_refusal() -> None:
    current = computed(system=["other"], tools=[LIST], max_tokens=1000)

    with pytest.raises(ResumeRefused) as refusal:
        resume_gate(computed(), current, force=False)

    message = str(refusal.value)
    assert "system prompt: changed" in message
    assert "tool set: changed" in message
    assert "max_tokens: 500000 -> 1000" in message


def test_a_changed_budget_is_refused_without_force() -> None:
    with pytest.raises(ResumeRefused, match="max_iterations: 50 -> 10"):
        resume_gate(computed(), computed(max_iterations=10), force=False)


def test_forcing_past_a_changed_model_drops_the_standing_grants() -> None:
    decision = resume_gate(computed(), computed(model="claude-opus"), force=True)

    assert decision == ResumeDecision(True, ("model: claude-sonnet -> claude-opus",))


def test_forcing_past_a_changed_tool_set_drops_the_standing_grants() -> None:
    decision = resume_gate(computed(), computed(tools=[LIST]), force=True)

    assert decision == ResumeDecision(True, ("tool set: changed",))


def test_an_unset_reasoning_effort_is_shown_as_none() -> None:
    with pytest.raises(ResumeRefused, match=r"reasoning_effort: \(none\) -> high"):
        resume_gate(computed(), computed(reasoning_effort="high"), force=False)


WIRE_ADVICE = ResumeAdvice(
    changed="start a new conversation, or send the request with force: true",
    never="; start a new conversation",
)


def test_a_conversation_goes_on_across_a_changed_tool_set_without_its_grants() -> None:
    decision = resume_gate(computed(), computed(tools=[LIST]), force=False, conversation=True)

    assert decision == ResumeDecision(True, ("tool set: changed",))


def test_a_conversation_goes_on_across_a_changed_budget() -> None:
    current = computed(max_tokens=1000, max_iterations=5)

    decision = resume_gate(computed(), current, force=False, conversation=True)

    assert decision.drop_standing_grants is False


def test_a_conversation_across_a_changed_model_is_refused_with_the_advice_given() -> None:
    with pytest.raises(ResumeRefused) as refusal:
        resume_gate(
            computed(),
            computed(model="claude-opus", tools=[LIST]),
            force=False,
            conversation=True,
            advice=WIRE_ADVICE,
        )

    message = str(refusal.value)
    assert message.endswith(
        f"(model: claude-sonnet -> claude-opus, tool set: changed); {WIRE_ADVICE.changed}"
    )
    assert "--force" not in message


def test_a_conversation_across_a_changed_provider_is_told_to_start_a_new_one() -> None:
    stored = computed()

    with pytest.raises(ResumeRefused) as refusal:
        resume_gate(
            stored,
            replace(stored, provider="openai"),
            force=True,
            conversation=True,
            advice=WIRE_ADVICE,
        )

    assert "start a new conversation" in str(refusal.value)
    assert "--force" not in str(refusal.value)


@pytest.mark.parametrize(
    ("configured", "stored", "allowance"),
    [(100_000, 5_000, 5_000), (5_000, 100_000, 5_000), (100_000, 0, 100_000)],
)
def test_a_conversation_keeps_the_lowest_allowance_it_was_given(
    configured: int, stored: int, allowance: int
) -> None:
    assert conversation_allowance(configured, computed(max_tokens=stored)) == allowance


def test_forcing_past_a_changed_system_prompt_drops_the_standing_grants() -> None:
    decision = resume_gate(computed(), computed(system=("You operate Kafka.",)), force=True)

    assert decision.drop_standing_grants is True
