from __future__ import annotations

from fisk_ai.screens.transcript import TranscriptScreen
from fisk_ai.workstation.sessions_app import SessionsApp
from tests.screens.journals import conversation_of, stream_report
from tests.screens.transcript_screen import screen_text

SIZE = (100, 30)


def viewer() -> SessionsApp:
    return SessionsApp(conversation=conversation_of(stream_report()))


async def test_the_viewer_shows_the_journal_folded() -> None:
    app = viewer()
    async with app.run_test(size=SIZE):
        text = screen_text(app)
        assert "> report on the ORDERS stream" in text
        assert "-> stream_info" in text
        assert "+ 26 more lines (ctrl-o to expand)" in text
        assert "+ 12 lines of thinking (z to expand)" in text
        assert "ORDERS holds 1260 messages." in text


async def test_capital_z_unfolds_and_folds_the_tool_output() -> None:
    app = viewer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("Z")
        assert "subject orders.29 holds 42 messages" in screen_text(app)
        await pilot.press("Z")
        assert "+ 26 more lines (ctrl-o to expand)" in screen_text(app)


async def test_z_unfolds_the_thinking() -> None:
    app = viewer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("z")
        assert "weighing option 0 against the stream limits" in screen_text(app)


async def test_thinking_opens_shown_when_asked_for() -> None:
    app = SessionsApp(conversation=conversation_of(stream_report()), thinking=True)
    async with app.run_test(size=SIZE):
        text = screen_text(app)
        assert "weighing option 0 against the stream limits" in text
        assert "lines of thinking (z to expand)" not in text


async def test_search_reveals_a_folded_match_and_n_moves_on() -> None:
    app = viewer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"orders.17", "enter")
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert screen.view.match_label == "1/1"
        assert "subject orders.17 holds 42 messages" in screen_text(app)
        await pilot.press("slash", *"holds", "enter")
        first = screen.view.match_label
        await pilot.press("n")
        assert screen.view.match_label != first


async def test_q_leaves_the_viewer() -> None:
    app = viewer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        assert not app.is_running


async def test_escape_in_the_search_field_keeps_the_viewer_open() -> None:
    app = viewer()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", "x", "escape")
        assert app.is_running
        assert isinstance(app.screen, TranscriptScreen)
