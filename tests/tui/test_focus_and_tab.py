"""Focus drawn on every widget that takes it, and Tab reaching only what the operator can see."""

from __future__ import annotations

import pytest
from rich.color_triplet import ColorTriplet
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import OptionList

from fisk_ai.agent.events import PromptEvent, TextEvent
from fisk_ai.screens.run import RunScreen
from fisk_ai.workstation.app import FiskApp
from tests.screens.held_bridge import MANY_TOOLS, HeldBridge

SIZES = [(80, 24), (160, 45)]
NOTICEABLE = 40
"""The least change of a colour channel counted as visible: xterm's grays 234 and 235, which
focus once told apart, are 10 apart."""

Cell = tuple[str, ColorTriplet | None, ColorTriplet | None]


def left_edge(widget: Widget) -> list[Cell]:
    """The widget's leftmost column as drawn: each cell's character and colours."""
    region = widget.region
    cells: list[Cell] = []
    for strip in widget.render_lines(Region(0, 0, region.width, region.height)):
        segment = next(iter(strip))
        style = segment.style
        foreground = style.color.triplet if style and style.color else None
        background = style.bgcolor.triplet if style and style.bgcolor else None
        cells.append((segment.text[:1], foreground, background))
    return cells


def apart(first: ColorTriplet | None, second: ColorTriplet | None) -> bool:
    if first is None or second is None:
        return first is not second
    return max(abs(a - b) for a, b in zip(first, second, strict=True)) >= NOTICEABLE


def visibly_different(before: list[Cell], after: list[Cell]) -> bool:
    for (glyph, fore, back), (glyph_after, fore_after, back_after) in zip(
        before, after, strict=True
    ):
        if glyph != glyph_after or apart(back, back_after):
            return True
        if glyph.strip() and apart(fore, fore_after):
            return True
    return False


def turns_of(screen: RunScreen) -> OptionList:
    return screen.query_one("#turns", OptionList)


async def with_turns(app: FiskApp, bridge: HeldBridge, count: int) -> None:
    """Prompts and answers as a run shows them, ``count`` turns of them."""
    for number in range(count):
        bridge.emit(PromptEvent(f"prompt number {number}"))
        bridge.emit(TextEvent(f"answer number {number}"))


@pytest.mark.parametrize("size", SIZES)
async def test_each_widget_that_takes_focus_looks_different_focused(
    size: tuple[int, int],
) -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, MANY_TOOLS)
    async with app.run_test(size=size) as pilot:
        screen = app.run_screen
        await with_turns(app, bridge, 3)
        await pilot.press("f2")
        widgets: list[Widget] = [screen.chat, screen.view, turns_of(screen)]
        if screen.side_panel.max_scroll_y:
            # A short terminal: the panel itself is a stop, to scroll its facts into view.
            widgets.append(screen.side_panel)
        for widget in widgets:
            app.set_focus(None)
            await pilot.pause()
            unfocused = left_edge(widget)
            widget.focus()
            await pilot.pause()
            assert widget.has_focus
            assert visibly_different(unfocused, left_edge(widget)), widget.id
    assert size != (80, 24) or len(widgets) == 4


# Tab reaches only what can be seen


async def tab_stops(pilot: Pilot[None], key: str, presses: int) -> list[str | None]:
    """Where focus lands on each of ``presses`` presses of ``key``. Each stop must be on screen
    and draw its focus: its left edge looks as it did before nothing had focus, otherwise."""
    screen = pilot.app.screen
    assert isinstance(screen, RunScreen)
    candidates = [screen.chat, screen.view, screen.side_panel, turns_of(screen)]
    screen.set_focus(None)
    await pilot.pause()
    unfocused = {widget.id: left_edge(widget) for widget in candidates if widget.display}
    stops: list[str | None] = []
    for _ in range(presses):
        await pilot.press(key)
        focused = screen.focused
        assert focused is not None
        assert screen.find_widget(focused).visible_region.area, focused.id
        assert visibly_different(unfocused[focused.id], left_edge(focused)), focused.id
        stops.append(focused.id)
    return stops


def cycling(order: list[str], stops: list[str | None]) -> list[str | None]:
    """``order`` repeated from wherever ``stops`` began, as long as ``stops``."""
    start = order.index(stops[0]) if stops[0] in order else 0
    return [order[(start + step) % len(order)] for step in range(len(stops))]


async def cycles(pilot: Pilot[None], order: list[str]) -> None:
    """Tab goes round ``order`` twice, and Shift-Tab round it backwards."""
    forward = await tab_stops(pilot, "tab", 2 * len(order))
    assert forward == cycling(order, forward)
    backward = await tab_stops(pilot, "shift+tab", 2 * len(order))
    assert backward == cycling(list(reversed(order)), backward)


@pytest.mark.parametrize("size", SIZES)
async def test_tab_cycles_through_the_chat_bar_and_transcript_with_the_panel_hidden(
    size: tuple[int, int],
) -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, MANY_TOOLS)
    async with app.run_test(size=size) as pilot:
        screen = app.run_screen
        await with_turns(app, bridge, 3)
        await pilot.press("f2")
        turns_of(screen).focus()
        await pilot.press("f2")
        assert not screen.side_panel.display
        await cycles(pilot, ["transcript", "chat"])


async def test_tab_reaches_the_panel_below_the_fold_at_80x24_and_scrolls_it_into_view() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, MANY_TOOLS)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.run_screen
        await with_turns(app, bridge, 12)
        await pilot.press("f2")
        panel = screen.side_panel
        assert panel.max_scroll_y > 0
        # The turns are below the fold until Tab reaches them.
        assert screen.find_widget(turns_of(screen)).visible_region.area == 0
        await cycles(pilot, ["transcript", "side-panel", "turns", "chat"])


async def test_at_160x45_the_panel_is_no_stop_of_its_own_and_tab_reaches_its_turns() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, MANY_TOOLS)
    async with app.run_test(size=(160, 45)) as pilot:
        await with_turns(app, bridge, 5)
        await pilot.press("f2")
        assert app.run_screen.side_panel.max_scroll_y == 0
        await cycles(pilot, ["transcript", "turns", "chat"])
