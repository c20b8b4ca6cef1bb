"""The side panel's facts fit its width: a long tool source cut to one row, a long counter put under
its label."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

from textual.widgets import Static

from fisk_ai.llm.types import Usage
from fisk_ai.tui.setup import ToolRow
from fisk_ai.tui.status import Counters
from fisk_ai.tui.widgets.side_panel import side_panel_text
from fisk_ai.workstation.app import FiskApp
from tests.screens.held_bridge import MANY_TOOLS, SETUP, HeldBridge


async def test_a_long_tool_source_is_cut_to_one_row_in_the_narrow_strip() -> None:
    source = "application_path /srv/ops/applications/fleet.yaml"
    tools = (
        ToolRow("stream_rm", source, gated=True),
        ToolRow("consumer_report_for_every_stream_in_the_account", source, gated=False),
    )
    app = FiskApp(HeldBridge(), replace(SETUP, tools=tools))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        panel = app.run_screen.side_panel
        width = panel.scrollable_content_region.width
        facts = str(panel.query_one("#side-facts", Static).render()).splitlines()
    rows = facts[1:3]
    assert all(len(row) <= width for row in rows)
    assert rows[0].startswith("  stream_rm")
    assert rows[0].endswith("\u2026  gated")
    assert rows[1].startswith("  consumer\u2026")
    assert rows[1].endswith("\u2026")


def test_a_counter_too_long_for_the_panel_goes_under_its_label_rather_than_wrapping() -> None:
    counters = Counters(usage=Usage(input_tokens=30, output_tokens=15))
    setup = dataclasses.replace(MANY_TOOLS, max_tokens=500_000)
    # The wide panel's text is 45 columns.
    lines = side_panel_text(setup, counters, width=45).splitlines()
    assert all(len(line) <= 45 for line in lines)
    at = lines.index("  budget used")
    assert lines[at + 1] == "    45 of 500,000 tokens (0%)"
    assert "  tokens in          30" in lines
