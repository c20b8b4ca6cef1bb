"""The status bar's ctrl-d hint: said while the chat bar waits for input, and only then."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.tui.status import Counters, RunState, StatusLine
from tests.fakes.provider import answer
from tests.tui.workstation import running
from tests.tui.workstation_driver import settle, status_text


async def test_the_status_bar_says_ctrl_d_done_while_the_chat_bar_waits(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("done")]) as (app, pilot):
        await settle(app, pilot)
        assert app.run_screen.run_state is RunState.AWAITING_INPUT
        assert status_text(app).endswith("ctrl-d done   F1 help")


def test_ctrl_d_done_is_said_only_while_input_is_awaited_and_fits_80_columns() -> None:
    waiting = StatusLine(RunState.AWAITING_INPUT, Counters(), "claude-sonnet-4-5", "2a9W" * 7)
    assert waiting.text(80).startswith("[awaiting input]")
    assert waiting.text(80).endswith("ctrl-d done   ? help")
    assert "ctrl-d" not in StatusLine(RunState.RUNNING).text()
