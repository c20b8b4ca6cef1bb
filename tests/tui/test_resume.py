"""The run screen reads a resumed conversation back, and opens the session browser."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot

from fisk_ai.screens.help import help_text
from fisk_ai.screens.run import IN_RUN_RESUME
from fisk_ai.screens.sessions import SessionBrowser
from fisk_ai.screens.transcript import TranscriptScreen
from fisk_ai.serve.prompts import SERVED
from fisk_ai.tui.status import RunState
from fisk_ai.workstation.app import FiskApp
from tests.fakes.provider import Reply, ScriptedProvider, answer
from tests.tui.workstation import SIZE, build_app, running
from tests.tui.workstation_driver import first_conversation, screen_text, send, settle


async def test_a_resumed_run_shows_the_stored_turns_before_the_chat_bar(tmp_path: Path) -> None:
    session = await first_conversation(tmp_path)
    async with running(tmp_path, [answer("still fine")], resume=session) as (app, pilot):
        await settle(app, pilot)
        text = screen_text(app)
        assert "> hello" in text
        assert "the streams are fine" in text
        assert text.index("the streams are fine") < text.index(f'--- resuming "{session}" ---')
        assert app.run_screen.chat.display
        assert app.run_screen.run_state is RunState.AWAITING_INPUT


async def test_a_remote_agents_conversation_is_read_back_over_a2a(tmp_path: Path) -> None:
    session = await first_conversation(tmp_path)
    async with running(tmp_path, [answer("still fine")], resume=session, remote=True) as (
        app,
        pilot,
    ):
        await settle(app, pilot)
        text = screen_text(app)
        assert "> hello" in text
        assert text.index("the streams are fine") < text.index(f'--- resuming "{session}" ---')


@asynccontextmanager
async def served_workstation(
    tmp_path: Path, replies: list[Reply], *, resume: str = ""
) -> AsyncIterator[tuple[FiskApp, Pilot[None]]]:
    """The workstation as a client of an agent that `fisk serve` hosts: served conversation
    tokens, and a store the app cannot read."""
    app, agent = build_app(
        tmp_path,
        ScriptedProvider(replies),
        prompt="" if resume else "hello",
        resume=resume,
        naming=SERVED,
        remote=True,
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            yield app, pilot
    finally:
        await agent.close()


async def test_a_served_conversation_at_rest_waits_for_its_next_prompt_without_an_error(
    tmp_path: Path,
) -> None:
    async with served_workstation(tmp_path, [answer("the streams are fine")]) as (app, pilot):
        await settle(app, pilot)
        token = app.bridge.session_id
    async with served_workstation(tmp_path, [answer("still fine")], resume=token) as (
        app,
        pilot,
    ):
        await settle(app, pilot)
        resumed = screen_text(app)
        state = app.run_screen.run_state
        await send(app, pilot, "and now?")
        await settle(app, pilot)
        followed = screen_text(app)
    assert "the streams are fine" in resumed
    assert state is RunState.AWAITING_INPUT
    assert "run ended" not in resumed
    assert "still fine" in followed


async def test_a_resumed_run_continues_with_a_follow_up(tmp_path: Path) -> None:
    session = await first_conversation(tmp_path)
    async with running(tmp_path, [answer("still fine")], resume=session) as (app, pilot):
        await settle(app, pilot)
        await send(app, pilot, "and now?")
        await settle(app, pilot)
        text = screen_text(app)
        assert "the streams are fine" in text
        assert "still fine" in text


async def test_f3_opens_the_browser_on_the_runs_sessions(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("the streams are fine")]) as (app, pilot):
        await settle(app, pilot)
        session = app.bridge.session_id
        await pilot.press("f3")
        await pilot.pause()
        browser = app.screen
        assert isinstance(browser, SessionBrowser)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [row.summary.run_id for row in browser.session_list.rows] == [session]


async def test_a_session_chosen_in_the_run_opens_the_viewer_and_q_comes_back(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, [answer("the streams are fine")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, TranscriptScreen)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, SessionBrowser)
        await pilot.press("q")
        await pilot.pause()
        assert app.screen_stack[-1] is app.run_screen
        assert app.is_running


async def test_r_in_the_runs_browser_keeps_the_running_conversation(tmp_path: Path) -> None:
    """The browser is dismissed with the chosen session; the run screen refuses to swap its
    conversation for it and says how to resume it instead."""
    posted: list[Message] = []
    async with running(tmp_path, [answer("the streams are fine")], message_hook=posted.append) as (
        app,
        pilot,
    ):
        await settle(app, pilot)
        session = app.bridge.session_id
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        assert app.screen_stack[-1] is app.run_screen
        assert app.is_running
        assert app.bridge.session_id == session
        notices = [
            message.notification.message for message in posted if isinstance(message, Notify)
        ]
        assert IN_RUN_RESUME in notices


def test_the_help_names_the_session_browser_key() -> None:
    assert "F3" in help_text()
