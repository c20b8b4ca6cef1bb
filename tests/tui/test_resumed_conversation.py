"""A resumed conversation: the counters read from the stored turns, and how its last turn ended
shown on the run screen and in the viewer."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.llm.registry import ProviderError
from fisk_ai.sessions import fold
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.workstation.sessions_app import SessionsApp
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer
from tests.screens.transcript_screen import screen_text as viewer_text
from tests.tui.workstation import SETTINGS, SIZE, build_app, ops_tools
from tests.tui.workstation_driver import (
    first_conversation,
    gated,
    screen_text,
    settle,
    status_text,
    until_resuming,
)


async def test_the_counters_read_the_stored_conversation_as_soon_as_it_resumes(
    tmp_path: Path,
) -> None:
    session = await first_conversation(tmp_path)
    async with gated(tmp_path, [answer("still fine")], resume=session) as (app, pilot, _):
        await until_resuming(app, pilot, session)
        counters = app.run_screen.counters
        assert counters.model_calls == 1
        assert counters.tokens > 0
        assert "tokens=0" not in status_text(app)


API_ERROR = "400 bad request: prompt is too long"


async def failed_session(tmp_path: Path) -> str:
    """A session whose one turn failed on an API error, as a run in lines leaves it."""
    settings = dataclasses.replace(SETTINGS, interactive=False)
    provider = ScriptedProvider([ProviderError(API_ERROR)])
    store = FileSessionStore(tmp_path / "runs")
    runner = Runner(
        Resources(settings, provider, ops_tools(tmp_path), store), events=RecordingSink()
    )
    try:
        result = await runner.start("how are the streams?")
    finally:
        await runner.close()
    return result.session_id


async def test_a_resumed_conversation_whose_last_turn_failed_shows_how_it_ended(
    tmp_path: Path,
) -> None:
    session = await failed_session(tmp_path)
    app, agent = build_app(
        tmp_path, ScriptedProvider([answer("fine now")]), prompt="", resume=session
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until_resuming(app, pilot, session)
            await settle(app, pilot)
            lines = app.run_screen.view.transcript.text().splitlines()
            text = screen_text(app)
    finally:
        await agent.close()
    marker = f'--- resuming "{session}" ---'
    assert lines[: lines.index(marker) + 1] == [
        "> how are the streams?",
        "--- run error ---",
        f"run ended: {API_ERROR}",
        marker,
    ]
    assert f"run ended: {API_ERROR}" in text


async def test_the_viewer_shows_how_the_last_turn_ended(tmp_path: Path) -> None:
    session = await failed_session(tmp_path)
    conversation = fold(await FileSessionStore(tmp_path / "runs").read(session))
    app = SessionsApp(conversation=conversation)
    async with app.run_test(size=SIZE):
        text = viewer_text(app)
    assert f"run ended: {API_ERROR}" in text
    assert text.index("> how are the streams?") < text.index("--- run error ---")
