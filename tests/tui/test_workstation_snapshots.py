from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from fisk_ai.llm.registry import ProviderUnavailable
from fisk_ai.screens.approval import ApprovalScreen
from fisk_ai.tui.status import RunState
from fisk_ai.workstation.app import FiskApp
from tests.fakes.provider import ScriptedProvider, call, calls
from tests.screens.answerable import until_answerable
from tests.tui.snapshot_pins import (
    ACCEPTANCE_SIZES,
    FIXED_SESSION,
    StallingProvider,
    stop_the_clock,
)
from tests.tui.workstation import build_app

SIZE = (100, 24)
SnapCompare = Callable[..., bool]


def test_the_run_screen_mid_turn(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """Prompt, thinking, a call and its folded output; the status bar says running."""
    provider = StallingProvider(
        [calls(call("t1", "say", {"words": "hi"}), text="Saying hi first.", thinking="plan")]
    )
    app, _ = build_app(tmp_path, provider, prompt="say hi to the fleet", naming=FIXED_SESSION)

    async def until_the_output(pilot: Pilot[None]) -> None:
        assert isinstance(pilot.app, FiskApp)
        while pilot.app.run_screen.view.transcript.line_count < 6:
            await pilot.pause()
        # The wait for the model counts seconds: stop the clock so the picture is stable.
        pilot.app.run_screen.ticker.pause()
        pilot.app.run_screen.activity_seconds = 0
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=until_the_output)


def test_the_run_screen_at_80x24_with_the_side_panel(
    snap_compare: SnapCompare, tmp_path: Path
) -> None:
    """At 80 columns the side panel is a narrow strip with its own scrollbar, and the status
    bar keeps the state word and the help hint, dropping the session first."""
    provider = StallingProvider(
        [calls(call("t1", "say", {"words": "hi"}), text="Saying hi first.", thinking="plan")]
    )
    app, _ = build_app(tmp_path, provider, prompt="say hi to the fleet", naming=FIXED_SESSION)

    async def until_the_output(pilot: Pilot[None]) -> None:
        assert isinstance(pilot.app, FiskApp)
        while pilot.app.run_screen.view.transcript.line_count < 6:
            await pilot.pause()
        pilot.app.run_screen.ticker.pause()
        pilot.app.run_screen.activity_seconds = 0
        await pilot.press("f2")

    assert snap_compare(app, terminal_size=(80, 24), run_before=until_the_output)


def test_the_approval_modal(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """The sanitised command line, the gating tag, and No first with the focus."""
    provider = StallingProvider([calls(call("t1", "stream_rm", {"stream": "ORDERS"}))])
    app, _ = build_app(tmp_path, provider, prompt="remove ORDERS", naming=FIXED_SESSION)

    async def until_the_question(pilot: Pilot[None]) -> None:
        while not isinstance(pilot.app.screen, ApprovalScreen):
            await pilot.pause()
        await until_answerable(pilot.app)

    assert snap_compare(app, terminal_size=SIZE, run_before=until_the_question)


@pytest.mark.parametrize("size", ACCEPTANCE_SIZES)
def test_mid_turn(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    """The prompt, thinking folded away, the narration, a call with its result header and
    folded output, then the turn waiting for the model: [running] and the activity."""
    provider = StallingProvider(
        [calls(call("t1", "say", {"words": "hi"}), text="Saying hi first.", thinking="plan")]
    )
    app, _ = build_app(tmp_path, provider, prompt="say hi to the fleet", naming=FIXED_SESSION)

    async def until_the_output(pilot: Pilot[None]) -> None:
        stop_the_clock(pilot)
        assert isinstance(pilot.app, FiskApp)
        while pilot.app.run_screen.view.transcript.line_count < 6:
            await pilot.pause()
        stop_the_clock(pilot)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=until_the_output)


@pytest.mark.parametrize("size", ACCEPTANCE_SIZES)
def test_at_an_approval(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    """The approval modal over the run screen: the command, its tag, No focused; [blocked]."""
    provider = StallingProvider([calls(call("t1", "stream_rm", {"stream": "ORDERS"}))])
    app, _ = build_app(tmp_path, provider, prompt="remove ORDERS", naming=FIXED_SESSION)

    async def until_the_question(pilot: Pilot[None]) -> None:
        stop_the_clock(pilot)
        while not isinstance(pilot.app.screen, ApprovalScreen):
            await pilot.pause()
        await until_answerable(pilot.app)

    assert snap_compare(app, terminal_size=size, run_before=until_the_question)


@pytest.mark.parametrize("size", ACCEPTANCE_SIZES)
def test_after_an_error(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    """A call ran, then the model call failed: the failure in the transcript, [error] in red
    on the status bar, and the chat bar open for the next prompt."""
    overloaded = ProviderUnavailable(
        "the Anthropic API is overloaded (529: Overloaded); try again later", status=529
    )
    provider = ScriptedProvider(
        [calls(call("t1", "say", {"words": "hi"}), text="Saying hi first."), overloaded]
    )
    app, _ = build_app(tmp_path, provider, prompt="say hi to the fleet", naming=FIXED_SESSION)

    async def until_the_error(pilot: Pilot[None]) -> None:
        stop_the_clock(pilot)
        assert isinstance(pilot.app, FiskApp)
        screen = pilot.app.run_screen
        while screen.turn_running or screen.run_state is not RunState.ERROR:
            await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=until_the_error)
