"""A conversation whose last turn used every iteration, resumed in the full screen: it is shown
with how the turn ended, nothing runs, and the chat bar takes the next prompt."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fisk_ai.agent.outcome import IterationsSpent
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.screens.run import CONTINUE_HERE
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.workstation.app import FiskApp
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.tui.workstation import SETTINGS, ops_tools, running
from tests.tui.workstation_driver import send, settle


def transcript_text(app: FiskApp) -> str:
    return app.run_screen.view.transcript.text()


async def capped_session(tmp_path: Path) -> str:
    """A session whose one turn, run in lines, used every iteration on tool calls."""
    settings = dataclasses.replace(SETTINGS, interactive=False)
    provider = ScriptedProvider(
        [calls(call(f"t{index}", "status")) for index in range(settings.max_iterations)]
    )
    store = FileSessionStore(tmp_path / "runs")
    runner = Runner(
        Resources(settings, provider, ops_tools(tmp_path), store), events=RecordingSink()
    )
    try:
        result = await runner.start("check every stream")
    finally:
        await runner.close()
    assert isinstance(result.outcome, IterationsSpent)
    return result.session_id


async def test_a_resume_after_the_cap_waits_at_the_chat_bar_and_the_next_prompt_runs(
    tmp_path: Path,
) -> None:
    session = await capped_session(tmp_path)
    async with running(tmp_path, [answer("carried on")], prompt="", resume=session) as (
        app,
        pilot,
    ):
        await settle(app, pilot)
        resumed = transcript_text(app)
        chat_open = app.run_screen.chat.display
        await send(app, pilot, "go on")
        await settle(app, pilot)
        followed = transcript_text(app)

    assert "> check every stream" in resumed
    assert CONTINUE_HERE in resumed
    assert resumed.count("run ended: the turn used all") == 1
    assert "carried on" not in resumed
    assert chat_open
    assert "carried on" in followed
