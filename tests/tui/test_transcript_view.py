from __future__ import annotations

from pathlib import Path

from fisk_ai.agent.events import Event, PromptEvent, TextEvent, ToolResultEvent
from fisk_ai.tools.base import ExecRecord
from fisk_ai.tui.transcript import Transcript
from tests.tui.sample import conversation, long_output
from tests.tui.viewer_app import ViewerApp

SIZE = (100, 30)


def long_app(tmp_path: Path, count: int = 200) -> ViewerApp:
    return ViewerApp(
        [PromptEvent("show me"), long_output(count)], tmp_path, Transcript(output_folded=False)
    )


def two_long_results() -> list[Event]:
    """The sample turn with two results long enough to fold after it."""
    error = ToolResultEvent("e", "\n".join(f"trace {n}" for n in range(12)), is_error=True)
    return [*conversation(), long_output(20), error]


def following(app: ViewerApp) -> bool:
    return app.view.following


def screen_text(app: ViewerApp) -> str:
    view = app.view
    return "\n".join(strip.text for strip in (view.render_line(y) for y in range(view.size.height)))


async def test_g_goes_to_the_top_and_capital_g_to_the_bottom(tmp_path: Path) -> None:
    app = long_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert app.view.scroll_y == app.view.max_scroll_y > 0
        await pilot.press("g")
        assert app.view.scroll_y == 0
        assert "> show me" in screen_text(app)
        await pilot.press("G")
        assert "row 199" in screen_text(app)


async def test_page_down_moves_a_screen(tmp_path: Path) -> None:
    app = long_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g", "pagedown")
        assert app.view.scroll_y == app.view.size.height
        assert "row 0\n" not in screen_text(app)


async def test_tail_follow_stops_on_scroll_up_and_rearms_at_the_bottom(tmp_path: Path) -> None:
    app = long_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("pageup")
        assert not following(app)
        app.view.append([TextEvent("new narration")])
        await pilot.pause()
        assert "new narration" not in screen_text(app)
        await pilot.press("end")
        assert following(app)
        app.view.append([TextEvent("newer narration")])
        await pilot.pause()
        assert "newer narration" in screen_text(app)


async def test_search_counts_matches_and_n_moves_to_the_next(tmp_path: Path) -> None:
    app = long_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        assert app.view.search("ROW 1") == 111
        assert app.view.match_label == "1/111"
        await pilot.press("n")
        assert app.view.match_label == "2/111"
        await pilot.press("N", "N")
        assert app.view.match_label == "111/111"


async def test_slash_asks_the_screen_for_a_search(tmp_path: Path) -> None:
    app = long_app(tmp_path, 5)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        assert app.search_requests == 1


async def test_search_reveals_a_folded_match(tmp_path: Path) -> None:
    app = ViewerApp(two_long_results(), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert "\nrow 17" not in screen_text(app)
        assert app.view.search("row 17") == 1
        await pilot.pause()
        assert "\nrow 17" in screen_text(app)


async def test_capital_z_unfolds_output_and_z_thinking(tmp_path: Path) -> None:
    app = ViewerApp(two_long_results(), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert "+ 16 more lines (Z in the transcript expands all)" in screen_text(app)
        await pilot.press("Z")
        assert "row 19" in screen_text(app)
        await pilot.press("z", "g")
        assert "step 7 of the plan" in screen_text(app)


async def test_enter_toggles_only_the_focused_block(tmp_path: Path) -> None:
    app = ViewerApp(two_long_results(), tmp_path)
    async with app.run_test(size=(100, 60)) as pilot:
        result = len(app.view.transcript) - 2
        app.view.show_block(result)
        await pilot.press("enter")
        text = screen_text(app)
        assert "row 19" in text
        assert "+ 8 more lines (ctrl-o to expand)" in text


async def test_brackets_jump_between_prompts(tmp_path: Path) -> None:
    events: list[Event] = [
        PromptEvent("first"),
        long_output(100),
        PromptEvent("second"),
        long_output(100),
    ]
    app = ViewerApp(events, tmp_path, Transcript(output_folded=False))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("left_square_bracket")
        assert screen_text(app).startswith("> second")
        await pilot.press("left_square_bracket")
        assert screen_text(app).startswith("> first")
        await pilot.press("right_square_bracket")
        assert screen_text(app).startswith("> second")


async def test_copy_all_returns_logical_text_and_writes_the_fallback(tmp_path: Path) -> None:
    app = ViewerApp(two_long_results(), tmp_path)
    async with app.run_test(size=(30, 30)):
        text = app.view.copy_all()
        assert "row 3\n" in text
        assert "row 4\n" not in text
        assert "There are three streams: ORDERS, INVOICES and SHIPPING." in text
        assert (tmp_path / "transcript-copy.txt").read_text() == text


async def test_copy_block_copies_the_focused_block(tmp_path: Path) -> None:
    app = ViewerApp(conversation(), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g", "down", "down", "down")
        assert app.view.copy_block() == "-> stream ls --all"


async def test_markup_and_escapes_in_tool_output_are_drawn_as_text(tmp_path: Path) -> None:
    output = "[/] [bold]x[/bold] [0] Hello \x1b[31mred\x1b[0m"
    events = [ToolResultEvent("c", output, exec=ExecRecord("x", 0))]
    app = ViewerApp(events, tmp_path, Transcript(output_folded=False))
    async with app.run_test(size=SIZE):
        assert "[/] [bold]x[/bold] [0] Hello red" in screen_text(app)


async def test_a_resize_rewraps_the_rows(tmp_path: Path) -> None:
    app = ViewerApp([TextEvent("word " * 60)], tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert app.view.virtual_size.height == 4
        await pilot.resize_terminal(40, 30)
        await pilot.pause()
        assert app.view.virtual_size.height == 9
        assert all(len(line.rstrip()) <= 38 for line in screen_text(app).splitlines())
