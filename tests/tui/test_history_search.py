"""Pilot tests for Ctrl-R's prompt history search, over a bare app that opens it and keeps what
it was dismissed with."""

from __future__ import annotations

from textual.widgets import OptionList, Static

from fisk_ai.screens.history_search import NO_HISTORY, NO_MATCH, HistorySearch
from tests.tui.history_search_app import SENT, SearchApp

SIZE = (80, 24)


def shown_rows(app: SearchApp) -> list[str]:
    options = app.screen.query_one("#history-matches", OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def status_line(app: SearchApp) -> str:
    return str(app.screen.query_one("#history-status", Static).content)


async def test_every_prompt_is_listed_newest_first() -> None:
    app = SearchApp(SENT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert shown_rows(app) == [
            "show [b]x[/b]",
            "Restart the broker then check it  (2 lines)",
            "list the streams",
            "restart NATS",
        ]


async def test_typing_narrows_the_list_in_any_case() -> None:
    app = SearchApp(SENT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"RESTART")
        assert shown_rows(app) == ["Restart the broker then check it  (2 lines)", "restart NATS"]


async def test_enter_answers_the_newest_match_whole() -> None:
    app = SearchApp(SENT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"restart", "enter")
        assert app.answers == ["Restart the broker\nthen check it"]


async def test_down_then_enter_answers_the_older_match() -> None:
    app = SearchApp(SENT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"restart", "down", "enter")
        assert app.answers == ["restart NATS"]


async def test_up_comes_back_to_the_newer_match() -> None:
    app = SearchApp(SENT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"restart", "down", "up", "enter")
        assert app.answers == ["Restart the broker\nthen check it"]


async def test_ctrl_r_again_moves_to_the_next_older_match() -> None:
    app = SearchApp(SENT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"restart", "ctrl+r", "enter")
        assert app.answers == ["restart NATS"]


async def test_ctrl_r_past_the_oldest_match_stays_on_it() -> None:
    app = SearchApp(SENT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"restart", "ctrl+r", "ctrl+r", "ctrl+r", "enter")
        assert app.answers == ["restart NATS"]


async def test_esc_answers_none() -> None:
    app = SearchApp(SENT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"restart", "escape")
        assert app.answers == [None]
        assert not isinstance(app.screen, HistorySearch)


async def test_enter_with_no_match_keeps_the_search_open() -> None:
    app = SearchApp(SENT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"nothing like it", "enter")
        assert app.answers == []
        assert isinstance(app.screen, HistorySearch)
        assert status_line(app).startswith(NO_MATCH)


async def test_an_empty_history_says_so() -> None:
    app = SearchApp(())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert status_line(app).startswith(NO_HISTORY)


async def test_a_prompt_with_markup_is_shown_as_typed() -> None:
    app = SearchApp(SENT)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"[b]")
        assert shown_rows(app) == ["show [b]x[/b]"]
        await pilot.press("enter")
        assert app.answers == ["show [b]x[/b]"]
