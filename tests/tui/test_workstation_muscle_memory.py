"""The chat bar's keys from other tools: Ctrl-R searches the prompts sent from any workstation,
Tab completes a chat command, and the prompts sent are kept in the history."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.screens.history_search import HistorySearch
from fisk_ai.tui.prompt_history import PromptHistory
from tests.fakes.provider import answer
from tests.tui.workstation import running
from tests.tui.workstation_driver import settle


async def test_a_prompt_sent_is_kept_for_every_later_workstation(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first"), answer("second")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("a", "g", "a", "i", "n", "enter")
        await settle(app, pilot)
        await app.workers.wait_for_complete()
    assert PromptHistory().entries() == ["hello", "again"]


async def test_ctrl_r_puts_the_chosen_prompt_in_the_bar_and_ctrl_z_undoes_it(
    tmp_path: Path,
) -> None:
    history = PromptHistory()
    history.add("check the ORDERS stream")
    history.add("list the consumers")
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("d", "r", "a", "f", "t", "ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, HistorySearch)
        await pilot.press("o", "r", "d", "enter")
        await pilot.pause()
        chat = app.run_screen.chat
        assert chat.value == "check the ORDERS stream"
        await pilot.press("ctrl+z")
        assert chat.value == "draft"


async def test_escape_from_the_history_search_leaves_the_bar_as_it_was(tmp_path: Path) -> None:
    PromptHistory().add("an old prompt")
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("k", "e", "e", "p", "ctrl+r", "escape")
        await pilot.pause()
        assert app.run_screen.chat.value == "keep"
        assert app.run_screen.chat.has_focus


async def test_tab_completes_a_chat_command_and_says_what_it_does(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        chat = app.run_screen.chat
        await pilot.press("slash", "c", "l")
        assert "/clear: drop the conversation" in str(chat.border_title)
        await pilot.press("tab")
        assert chat.value == "/clear "
        assert chat.has_focus


async def test_tab_with_no_command_to_complete_moves_the_focus(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("h", "i", "tab")
        assert not app.run_screen.chat.has_focus
        assert app.run_screen.chat.value == "hi"
