"""The run screen's side panel text."""

from __future__ import annotations

from fisk_ai.tui.setup import RunSetup, ToolRow
from fisk_ai.tui.status import Counters
from fisk_ai.tui.widgets.side_panel import side_panel_text


def setup_with(*tools: ToolRow) -> RunSetup:
    return RunSetup(
        identity="ops-agent",
        model="test-model",
        prompt="hello",
        tools=tools,
        max_tokens=1000,
        bell=False,
        version="test",
    )


def test_the_tool_list_marks_gated_and_deferred_tools() -> None:
    text = side_panel_text(
        setup_with(
            ToolRow("stream_ls", "ops", gated=False, deferred=True),
            ToolRow("stream_rm", "ops", gated=True, deferred=True),
            ToolRow("ask_human_confirm", "built-in", gated=False),
        ),
        Counters(),
    )

    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[1:4]}
    assert rows == {
        "stream_ls": ["ops", "deferred"],
        "stream_rm": ["ops", "gated", "deferred"],
        "ask_human_confirm": ["built-in"],
    }


def test_the_counters_count_standing_approvals() -> None:
    assert "standing approvals 2" in side_panel_text(setup_with(), Counters(), 2)
