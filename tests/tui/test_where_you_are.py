"""Issue 14, hard to read where you are: the tail, unseen output, focus, help, activity."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList, Static

from fisk_ai.agent.events import TextEvent, ToolCallEvent, ToolResultEvent
from fisk_ai.llm.types import Usage
from fisk_ai.tui.status import Counters, RunState, StatusLine, budget_text
from fisk_ai.workstation.app import FiskApp
from tests.fakes.provider import answer
from tests.screens.held_bridge import SETUP, SIZE, HeldBridge
from tests.tui.workstation import running
from tests.tui.workstation_driver import send, settle, status_text


def following(app: FiskApp) -> bool:
    return app.run_screen.view.following


def shown(widget: Static) -> bool:
    return bool(widget.display)


LONG = "\n".join(f"line {number}" for number in range(200))


async def test_sending_while_scrolled_up_follows_the_tail(tmp_path: Path) -> None:
    async with running(tmp_path, [answer(LONG), answer("the end")]) as (app, pilot):
        await settle(app, pilot)
        view = app.run_screen.view
        view.focus()
        await pilot.press("g")
        assert not following(app)
        app.run_screen.chat.focus()
        await send(app, pilot, "and then?")
        await settle(app, pilot)
        assert following(app)
        assert round(view.scroll_offset.y) == view.max_scroll_y


async def test_output_below_the_screen_shows_a_marker_until_followed() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        bridge.emit(TextEvent(LONG))
        await pilot.pause()
        marker = screen.query_one("#below", Static)
        assert not shown(marker)
        screen.view.focus()
        await pilot.press("g")
        bridge.emit(TextEvent("more"))
        await pilot.pause()
        assert shown(marker)
        await pilot.press("G")
        assert not shown(marker)


async def test_a_running_tool_shows_in_the_status_bar_with_its_time() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        bridge.emit(ToolCallEvent("t1", "ops_say", {"words": "hi"}, command=("say", "hi")))
        await pilot.pause()
        assert screen.activity == "say hi"
        screen._tick()
        screen._tick()
        await pilot.pause()
        assert "[running]  say hi 2s" in status_text(app)
        bridge.emit(ToolResultEvent("t1", "hi"))
        await pilot.pause()
        assert screen.activity == "waiting for the model"
        assert "say hi" not in status_text(app)


async def test_the_help_hint_names_a_key_that_works_where_the_focus_is() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        assert screen.chat.has_focus
        assert status_text(app).endswith("F1 help")
        await pilot.press("question_mark")
        assert screen.chat.value == "?"
        screen.view.focus()
        await pilot.pause()
        assert status_text(app).endswith("? help")


async def test_hiding_the_panel_with_its_list_focused_moves_focus_to_the_chat_bar() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        await pilot.press("f2")
        screen.query_one("#turns", OptionList).focus()
        await pilot.pause()
        await pilot.press("f2")
        assert not screen.side_panel.display
        assert screen.chat.has_focus
        assert screen.run_state is RunState.RUNNING


def test_counters_carry_thousands_separators() -> None:
    counters = Counters(usage=Usage(input_tokens=12_345, output_tokens=1_000))
    assert "tokens=12,345/1,000" in StatusLine(counters=counters).text()
    assert budget_text(counters, 200_000) == "13,345 of 200,000 tokens (6%)"
