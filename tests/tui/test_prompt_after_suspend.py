"""A prompt sent after a suspended turn: drawn below it and answered once."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.tui.status import RunState
from tests.fakes.provider import answer, call, calls
from tests.tui.workstation_driver import gated, screen_text, send, settle, texts_of


async def test_a_prompt_after_a_suspended_turn_is_drawn_after_it_and_answered_once(
    tmp_path: Path,
) -> None:
    replies = [
        calls(call("c1", "stream_info", {"stream": "ORDERS"}), text="checking"),
        answer("ORDERS is fine"),
        answer("never asked for"),
    ]
    async with gated(tmp_path, replies) as (app, pilot, provider):
        await pilot.pause()
        await pilot.press("ctrl+c")
        provider.gate.set()
        await settle(app, pilot)
        assert app.run_screen.run_state is RunState.SUSPENDED
        await send(app, pilot, "next please")
        await settle(app, pilot)
        text = screen_text(app)
    # One model call takes the stopped turn's results and the new prompt together, so its
    # answer is the prompt's, drawn below it.
    assert provider.calls == 2
    assert texts_of(provider, 1)[-1] == "next please"
    assert text.index("--- run suspended ---") < text.index("> next please")
    assert text.index("> next please") < text.index("ORDERS is fine")
    assert "never asked for" not in text
