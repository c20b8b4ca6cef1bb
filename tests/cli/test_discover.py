"""How `fisk discover` prints a card: what a caller reads before it sends anything."""

from __future__ import annotations

from datetime import UTC, datetime

from fisk_ai.a2a.messages import DiscoveryReply, Identity
from fisk_ai.cli.discover import render_card


def card(**fields: object) -> DiscoveryReply:
    return DiscoveryReply.model_validate(
        {
            "id": "m1",
            "request": "r1",
            "conversation": "c1",
            "sequence": 1,
            "time": datetime(2026, 12, 2, tzinfo=UTC),
            "sender": Identity(name="ops"),
            "name": "ops",
            "version": "1.2.0",
            "protocols": ["io.choria.fisk-ai.v1"],
            **fields,
        }
    )


def rows(text: str) -> dict[str, str]:
    pairs = (line.split(": ", 1) for line in text.splitlines() if ": " in line)
    return {label.strip(): value for label, value in pairs}


def test_an_agent_answering_prompts_shows_what_it_exports() -> None:
    printed = rows(render_card(card(model="claude-test-1", telemetry=True)))

    assert printed["Telemetry"] == "enabled"
    assert printed["Telemetry Content"] == "disabled"


def test_an_agent_serving_only_tools_shows_no_telemetry_rows() -> None:
    printed = rows(render_card(card()))

    assert "Telemetry" not in printed
    assert "Telemetry Content" not in printed
