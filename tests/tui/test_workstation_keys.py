"""Pilot tests for the run screen's chat bar, startup card, side panel and transcript keys,
driven by a scripted agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from fisk_ai.screens.approval import ApprovalScreen
from fisk_ai.tui.status import RunState
from fisk_ai.tui.transcript import BlockKind
from fisk_ai.workstation.app import FiskApp
from tests.fakes.provider import answer, call, calls
from tests.tui.workstation import running
from tests.tui.workstation_driver import (
    gated,
    remove_stream,
    screen_text,
    send,
    settle,
    until_question,
)


def still_running(app: FiskApp) -> bool:
    return app.is_running


def card(app: FiskApp) -> Static:
    return app.run_screen.query_one("#startup", Static)


async def test_alt_enter_and_ctrl_j_put_a_newline_in_the_chat_bar(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first"), answer("second")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("o", "n", "e", "alt+enter", "t", "w", "o", "ctrl+j", "x")
        assert app.run_screen.chat.value == "one\ntwo\nx"
        assert app.run_screen.run_state is RunState.AWAITING_INPUT
        await pilot.press("enter")
        await settle(app, pilot)
        lines = [line.rstrip() for line in screen_text(app).splitlines()]
        assert lines[lines.index("> one") : lines.index("> one") + 3] == ["> one", "two", "x"]
        assert "second" in lines


async def test_up_on_a_later_line_moves_within_the_chat_bar(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("a", "alt+enter", "b", "up")
        assert app.run_screen.chat.value == "a\nb"
        await pilot.press("up")
        assert app.run_screen.chat.value == "hello"


async def test_the_startup_card_stays_until_the_first_event_arrives(tmp_path: Path) -> None:
    async with gated(tmp_path, [answer("ready")]) as (app, pilot, provider):
        await pilot.pause()
        shown = str(card(app).render())
        assert card(app).display
        for expected in ("ops-agent", "test-model", "3 tools, 1 gated", "test", "starting"):
            assert expected in shown
        provider.gate.set()
        await settle(app, pilot)
        assert not card(app).display
        assert "ready" in screen_text(app)


async def test_the_side_panel_lists_the_turns_and_jumps_to_one(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first"), answer("second")]) as (app, pilot):
        await settle(app, pilot)
        await send(app, pilot, "and then?")
        await settle(app, pilot)
        await pilot.press("f2")
        turns = app.run_screen.query_one("#turns", OptionList)
        labels = [str(turns.get_option_at_index(i).prompt) for i in range(turns.option_count)]
        assert [label.split(maxsplit=1)[1] for label in labels] == ["hello", "and then?"]
        turns.focus()
        await pilot.press("home", "enter")
        view = app.run_screen.view
        assert view.has_focus
        assert view.focused_block is not None
        assert view.transcript.blocks[view.focused_block].kind is BlockKind.PROMPT
        assert view.transcript.block_text(view.focused_block) == "> hello"


async def test_always_counts_a_standing_approval(tmp_path: Path) -> None:
    async with running(tmp_path, remove_stream()) as (app, pilot):
        await until_question(app, pilot)
        await pilot.press("right", "right", "enter")  # Always
        await settle(app, pilot)
        await pilot.press("f2")
        facts = str(app.run_screen.query_one("#side-facts", Static).render())
        assert "standing approvals 1" in facts


async def test_slash_searches_the_run_screen_and_n_moves_on(tmp_path: Path) -> None:
    replies = [answer("streams: ORDERS"), answer("more streams")]
    async with running(tmp_path, replies, prompt="list streams") as (app, pilot):
        await settle(app, pilot)
        await send(app, pilot, "again")
        await settle(app, pilot)
        view = app.run_screen.view
        view.focus()
        await pilot.press("slash")
        await pilot.press(*"streams", "enter")
        assert view.has_focus
        assert view.match_label.endswith("/3")
        before = view.match_label
        await pilot.press("n")
        assert view.match_label != before


async def test_escape_in_the_search_field_gives_the_keys_back(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("done")]) as (app, pilot):
        await settle(app, pilot)
        app.run_screen.view.focus()
        await pilot.press("slash", "x", "escape")
        assert app.run_screen.view.has_focus
        assert not app.run_screen.view.matches


async def test_capital_z_unfolds_tool_output_on_the_run_screen(tmp_path: Path) -> None:
    replies = [calls(call("t1", "say", {"words": "moo"})), answer("done")]
    async with running(tmp_path, replies) as (app, pilot):
        await settle(app, pilot)
        assert "more line (ctrl-o to expand)" in screen_text(app)
        app.run_screen.view.focus()
        await pilot.press("Z")
        assert "more line (ctrl-o to expand)" not in screen_text(app)
        view = app.run_screen.view
        width = view.row_width
        rows = view.transcript.rows(0, view.transcript.row_count(width), width)
        assert any("moo" in row.text for row in rows)


async def test_left_bracket_jumps_to_the_previous_prompt(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first"), answer("second")]) as (app, pilot):
        await settle(app, pilot)
        await send(app, pilot, "and then?")
        await settle(app, pilot)
        view = app.run_screen.view
        view.focus()
        await pilot.press("left_square_bracket")
        assert view.focused_block is not None
        assert view.transcript.block_text(view.focused_block) == "> and then?"
        await pilot.press("left_square_bracket")
        assert view.transcript.block_text(view.focused_block) == "> hello"


async def test_y_copies_the_transcript_as_logical_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    long_answer = "word " * 60
    async with running(tmp_path, [answer(long_answer)]) as (app, pilot):
        await settle(app, pilot)
        app.run_screen.view.focus()
        await pilot.press("y")
        copied = (tmp_path / "state" / "fisk-ai" / "transcript-copy.txt").read_text()
        assert copied.startswith("> hello\n")
        assert long_answer.strip() in copied


async def test_ctrl_c_stops_a_turn_waiting_on_the_model_at_once_and_a_second_leaves(
    tmp_path: Path,
) -> None:
    # The model's reply never comes: the stop cancels the call rather than wait for it.
    async with gated(tmp_path, [answer("never seen")]) as (app, pilot, _):
        await pilot.pause()
        await pilot.press("ctrl+c")
        await settle(app, pilot)
        assert app.run_screen.run_state is RunState.SUSPENDED
        assert still_running(app)
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert not still_running(app)


async def test_markup_in_a_question_is_shown_as_typed(tmp_path: Path) -> None:
    replies = [calls(call("t1", "stream_rm", {"stream": "\x1b[31m[b]x[/b]"})), answer("ok")]
    async with running(tmp_path, replies) as (app, pilot):
        await until_question(app, pilot)
        assert isinstance(app.screen, ApprovalScreen)
        shown = str(app.screen.query_one("#approval-command").render())
        assert "[b]x[/b]" in shown
        assert "\x1b" not in shown
        await pilot.press("enter")
        await settle(app, pilot)
