"""The chat bar owns what is typed into it: Enter takes the text in one step, queued prompts are
separate items, Ctrl-C and Ctrl-D never throw a draft away unasked, printable keys reach the bar
wherever the focus is, the transcript scrolls from the bar, and Esc stops a turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.color import Color

from fisk_ai.screens.approval import ApprovalScreen
from fisk_ai.screens.run import STANDING_APPROVAL_RAN, approval_answer_text
from fisk_ai.tools.questions import ApprovalChoice, ApprovalQuestion, DeclineWithReason
from fisk_ai.tui.status import RunState
from fisk_ai.tui.theme import DARK_THEME, LIGHT_THEME
from fisk_ai.tui.widgets.status_bar import StatusBar
from fisk_ai.workstation.app import DRAFT_DISCARDED, LEAVE_ARMED
from tests.fakes.provider import answer, call, calls
from tests.tui.workstation import running
from tests.tui.workstation_driver import gated, send, settle, texts_of, toasts, until_question


async def test_keys_typed_right_after_enter_stay_in_the_bar(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first"), answer("second")]) as (app, pilot):
        await settle(app, pilot)
        # Enter and the next keys arrive together, before the screen has acted on Enter.
        await pilot.press("a", "enter", "b", "c")
        await settle(app, pilot)
        assert app.run_screen.chat.value == "bc"
        assert app.run_screen.last_answer == "second"


async def test_two_prompts_queued_during_a_turn_go_as_two_turns_in_order(tmp_path: Path) -> None:
    replies = [answer("first"), answer("to one"), answer("to two")]
    async with gated(tmp_path, replies) as (app, pilot, provider):
        await pilot.press("o", "n", "e", "enter", "t", "w", "o", "enter")
        screen = app.run_screen
        assert screen.chat.queued == ("one", "two")
        assert screen.chat.value == ""
        shown = str(screen.query_one("#queued").render())
        assert "1. one" in shown and "2. two" in shown
        provider.gate.set()
        for _ in range(3):
            await settle(app, pilot)
        assert texts_of(provider, 1)[-1] == "one"
        assert texts_of(provider, 2)[-1] == "two"
        # Read afresh: the turns have taken both prompts from the bar's outbox.
        assert app.run_screen.chat.queued == ()
        assert not screen.query_one("#queued").display


async def test_a_stopped_turn_puts_its_queued_prompts_back_in_the_bar(tmp_path: Path) -> None:
    async with gated(tmp_path, [answer("never")]) as (app, pilot, provider):
        await pilot.press("o", "n", "e", "enter", "t", "w", "o")
        await pilot.press("escape")
        # The model's reply is never let through: the stop does not wait for it.
        await settle(app, pilot)
        assert app.run_screen.run_state is RunState.SUSPENDED
        assert app.run_screen.chat.value == "one\ntwo"
        assert provider.calls <= 1


async def test_ctrl_c_empties_a_draft_then_asks_before_it_leaves(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("d", "r", "a", "f", "t", "ctrl+c")
        assert app.run_screen.chat.value == ""
        assert app.is_running
        assert DRAFT_DISCARDED in toasts(app)
        # Ctrl-Z is the editor's undo: the emptied draft comes back.
        await pilot.press("ctrl+z")
        assert app.run_screen.chat.value == "draft"
        await pilot.press("ctrl+u", "ctrl+c")
        assert app.is_running
        assert LEAVE_ARMED in toasts(app)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_a_key_between_two_ctrl_c_presses_disarms_leaving(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("ctrl+c", "x", "backspace", "ctrl+c")
        await pilot.pause()
        assert app.is_running


async def test_ctrl_d_leaves_only_from_an_empty_bar(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("a", "b", "left", "ctrl+d")
        await pilot.pause()
        assert app.is_running
        assert app.run_screen.chat.value == "a"
        await pilot.press("backspace", "ctrl+d")
        await pilot.pause()
        assert not app.is_running


async def test_printable_keys_on_the_transcript_go_to_the_bar_once_writing(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        screen = app.run_screen
        await pilot.press("a")
        screen.view.focus()
        await pilot.pause()
        # y would copy the transcript and / open search: with a draft, they are text.
        await pilot.press("y", "slash", "n")
        assert screen.chat.value == "ay/n"
        assert screen.chat.has_focus
        assert not screen.search_field.display


async def test_page_keys_in_the_bar_scroll_the_transcript(tmp_path: Path) -> None:
    long_answer = "\n\n".join(f"paragraph {number}" for number in range(80))
    async with running(tmp_path, [answer(long_answer)]) as (app, pilot):
        await settle(app, pilot)
        view = app.run_screen.view
        bottom = view.scroll_offset.y
        assert bottom > 0
        await pilot.press("pageup")
        await pilot.pause()
        assert view.scroll_offset.y < bottom
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert view.scroll_offset.y == 0
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert view.scroll_offset.y == bottom
        assert app.run_screen.chat.has_focus


async def test_a_call_under_a_standing_approval_says_so(tmp_path: Path) -> None:
    replies = [
        calls(call("t1", "stream_rm", {"stream": "ORDERS"})),
        calls(call("t2", "stream_rm", {"stream": "EVENTS"})),
        answer("both gone"),
    ]
    async with running(tmp_path, replies) as (app, pilot):
        await until_question(app, pilot)
        assert isinstance(app.screen, ApprovalScreen)
        app.screen.dismiss(ApprovalChoice.ALWAYS)
        while app.run_screen.turn_running:
            await pilot.pause()
        text = app.run_screen.view.transcript.text()
        assert f"{STANDING_APPROVAL_RAN}: stream rm -- EVENTS" in text
        assert f"{STANDING_APPROVAL_RAN}: stream rm -- ORDERS" not in text


def _luminance(color: Color) -> float:
    def channel(value: int) -> float:
        scaled = value / 255
        return scaled / 12.92 if scaled <= 0.03928 else ((scaled + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def _contrast(one: Color, other: Color) -> float:
    lighter, darker = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


async def test_every_state_word_reads_at_four_and_a_half_to_one_in_both_themes(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        bar = app.run_screen.query_one(StatusBar)
        for theme in (DARK_THEME, LIGHT_THEME):
            app.theme = theme
            for state in RunState:
                bar.run_state = state
                await pilot.pause()
                _, _, background, color = bar.colors
                foreground = background + color
                assert _contrast(foreground, background) >= 4.5, (theme, state)


def test_a_decline_with_a_reason_keeps_the_sentence_in_the_transcript() -> None:
    question = ApprovalQuestion("t1", "stream_rm", "stream rm", "stream rm -- ORDERS", "ai:confirm")
    line = approval_answer_text(question, DeclineWithReason("ORDERS is in use"))
    assert line == 'declined (told the agent: "ORDERS is in use"): stream rm -- ORDERS'


@pytest.mark.parametrize("remote", [False, True], ids=["local", "remote"])
async def test_a_call_under_a_grant_restored_on_resume_says_so(
    tmp_path: Path, remote: bool
) -> None:
    first = [calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("gone")]
    async with running(tmp_path, first) as (app, pilot):
        await until_question(app, pilot)
        app.screen.dismiss(ApprovalChoice.ALWAYS)
        while app.run_screen.turn_running:
            await pilot.pause()
        session = app.bridge.session_id
        await pilot.press("ctrl+d")
    follow_up = [calls(call("t2", "stream_rm", {"stream": "EVENTS"})), answer("also gone")]
    async with running(tmp_path, follow_up, resume=session, remote=remote) as (app, pilot):
        await settle(app, pilot)
        await send(app, pilot, "and EVENTS")
        await settle(app, pilot)
        assert app.run_screen.last_answer == "also gone"
        text = app.run_screen.view.transcript.text()
        assert f"{STANDING_APPROVAL_RAN}: stream rm -- EVENTS" in text


async def test_editing_keys_act_in_the_order_they_were_typed(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        # All of them reach the app before the bar has acted on any, as from a fast typist.
        for key, character in [("x", "x"), ("y", "y"), ("backspace", None), ("z", "z")]:
            app.post_message(events.Key(key, character))
        await settle(app, pilot)
        assert app.run_screen.chat.value == "xz"


async def test_typing_that_starts_on_the_transcript_lands_in_the_bar_in_order(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, [answer("fine")]) as (app, pilot):
        await settle(app, pilot)
        screen = app.run_screen
        screen.view.focus()
        await pilot.pause()
        keys = [("a", "a"), ("ctrl+j", None), ("x", "x"), ("backspace", None), ("y", "y")]
        for key, character in keys:
            app.post_message(events.Key(key, character))
        app.post_message(events.Paste(" and more"))
        await settle(app, pilot)
        assert screen.chat.value == "a\ny and more"
        assert screen.chat.has_focus
