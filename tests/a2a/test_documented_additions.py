"""What this build adds to the upstream protocol is written down where a peer's author looks:
in the shipped schema beside the upstream fields, and in docs/a2a.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fisk_ai.a2a.codec import SCHEMA_BASE, schema_documents
from fisk_ai.a2a.messages import ToolCallBody, ToolResultBody
from fisk_ai.agent.events import StatusPhase

A2A_DOC = Path(__file__).resolve().parents[2] / "docs" / "a2a.md"


def block_properties(name: str) -> dict[str, Any]:
    properties: dict[str, Any] = schema_documents()[f"{SCHEMA_BASE}{name}.json"]["properties"]
    return dict(properties["block"]["properties"])


@pytest.mark.parametrize(
    ("schema", "model"),
    [("event.tool_call", ToolCallBody), ("event.tool_result", ToolResultBody)],
)
def test_every_field_of_a_tool_block_is_in_its_shipped_schema(
    schema: str, model: type[ToolCallBody] | type[ToolResultBody]
) -> None:
    assert set(model.model_fields) <= set(block_properties(schema))


@pytest.mark.parametrize(
    ("schema", "field"), [("event.tool_call", "argv"), ("event.tool_result", "timed_out")]
)
def test_an_addition_of_ours_says_receivers_without_it_ignore_it(schema: str, field: str) -> None:
    description = block_properties(schema)[field]["description"]

    assert "An addition of the Python implementation" in description
    assert "ignore it" in description


def test_the_a2a_doc_names_every_status_phase_this_build_sends() -> None:
    text = A2A_DOC.read_text(encoding="utf-8")

    assert [phase for phase in StatusPhase if f"`{phase.value}`" not in text] == []
