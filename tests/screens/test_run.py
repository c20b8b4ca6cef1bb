"""The run screen's turn worker and state machine, against a bridge whose turn the test ends."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Static

from fisk_ai.agent.outcome import Completed, RunResult
from fisk_ai.errors import FiskError
from fisk_ai.screens.run import RunScreen
from fisk_ai.tui.status import RunState
from fisk_ai.workstation.app import FiskApp
from tests.screens.held_bridge import SETUP, SIZE, HeldBridge


def ended(posted: list[Message]) -> list[RunScreen.TurnEnded]:
    return [message for message in posted if isinstance(message, RunScreen.TurnEnded)]


def failed(posted: list[Message]) -> list[RunScreen.TurnFailed]:
    return [message for message in posted if isinstance(message, RunScreen.TurnFailed)]


async def test_a_turn_that_returns_posts_turn_ended_with_its_result() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    posted: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=posted.append) as pilot:
        result = RunResult(Completed("the streams are fine"), session_id="s1")
        bridge.turn_end.set_result(result)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [message.result for message in ended(posted)] == [result]
        assert not failed(posted)
        screen = app.run_screen
        assert screen.last_result is result
        assert screen.last_answer == "the streams are fine"
        assert screen.run_state is RunState.AWAITING_INPUT
        assert not screen.turn_running
        assert screen.chat.display and screen.chat.has_focus


async def test_a_turn_that_raises_a_fisk_error_posts_turn_failed_with_its_sentence() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    posted: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=posted.append) as pilot:
        bridge.turn_end.set_exception(FiskError("the agent ops-agent\ndid not answer"))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [message.error for message in failed(posted)] == [
            "the agent ops-agent did not answer"
        ]
        assert not ended(posted)
        screen = app.run_screen
        assert screen.error == "the agent ops-agent did not answer"
        assert "run ended: the agent ops-agent did not answer" in screen.view.transcript.text()
        assert screen.run_state is RunState.ERROR
        assert screen.chat.display


async def test_a_turn_that_raises_anything_else_names_the_exception() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    posted: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=posted.append) as pilot:
        bridge.turn_end.set_exception(RuntimeError("the socket closed"))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [message.error for message in failed(posted)] == ["RuntimeError: the socket closed"]
        assert app.is_running


async def test_leaving_mid_turn_posts_nothing_and_counts_as_left_mid_turn() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    posted: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=posted.append) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+d")
        await pilot.pause()
    assert not ended(posted) and not failed(posted)
    assert app.outcome.left_mid_turn


async def test_the_state_machine_keeps_a_stop_request_over_a_move_to_running() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        screen.run_state = RunState.SUSPENDING
        screen.run_state = RunState.RUNNING
        assert screen.run_state is RunState.SUSPENDING
        await pilot.pause()
        bar = screen.query_one("#status", Static)
        assert str(bar.render()).startswith("[suspending]")
        assert bar.has_class(RunState.SUSPENDING.css_class)
        assert not bar.has_class(RunState.RUNNING.css_class)


async def test_a_legal_move_redraws_the_status_bar() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        screen.run_state = RunState.BLOCKED
        await pilot.pause()
        bar = screen.query_one("#status", Static)
        assert str(bar.render()).startswith("[blocked]")
        assert bar.has_class(RunState.BLOCKED.css_class)
