"""Issue 14, rough edges, the activity line and the side panel at 80 columns."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.message import Message
from textual.widgets import Static

from fisk_ai.agent.events import TextEvent, ToolResultEvent, WarningEvent, WarningKind
from fisk_ai.agent.gate import declined_reason, denial_content
from fisk_ai.agent.outcome import Completed, RunResult, Suspended
from fisk_ai.screens.help import HelpScreen
from fisk_ai.tools.base import ExecRecord
from fisk_ai.tui.setup import ToolRow
from fisk_ai.tui.status import Counters, RunState, StatusLine
from fisk_ai.tui.transcript import BlockKind, Transcript
from fisk_ai.tui.widgets.transcript_view import TranscriptView
from fisk_ai.workstation.app import FiskApp
from tests.fakes.provider import answer
from tests.screens.held_bridge import SETUP, SIZE, HeldBridge
from tests.tui.workstation import running
from tests.tui.workstation_driver import (
    remove_stream,
    send,
    settle,
    status_text,
    toasts,
    until_question,
)

NARROW = (80, 24)


def shown_rows(transcript: Transcript, width: int = 100) -> list[str]:
    return [row.text for row in transcript.rows(0, transcript.row_count(width), width)]


# Output line counts


def test_output_ending_in_a_line_break_counts_its_lines_and_draws_no_blank_row() -> None:
    transcript = Transcript()
    output = "".join(f"line {number}\n" for number in range(4000))
    transcript.add_event(ToolResultEvent("t1", output))
    assert shown_rows(transcript) == [
        "<- 4000 lines",
        "line 0",
        "line 1",
        "line 2",
        "line 3",
        "+ 3996 more lines (ctrl-o to expand)",
    ]
    transcript.toggle_output()
    assert shown_rows(transcript)[-1] == "line 3999"


# Failed commands and declined approvals are marked


def test_a_command_that_failed_is_an_error_with_its_exit_status_in_the_header() -> None:
    transcript = Transcript()
    transcript.add_event(ToolResultEvent("t1", "no such stream\n", exec=ExecRecord("x", 3)))
    assert transcript.blocks[0].kind is BlockKind.ERROR
    assert shown_rows(transcript) == ["<- failed (exit 3) \u00b7 1 line", "no such stream"]


def test_a_declined_call_says_so_and_does_not_fold() -> None:
    transcript = Transcript()
    refusal = denial_content(declined_reason("stream rm ORDERS"))
    transcript.add_event(ToolResultEvent("t1", refusal))
    assert transcript.blocks[0].kind is BlockKind.ERROR
    assert shown_rows(transcript) == [
        '<- declined: the operator declined to run "stream rm ORDERS"'
    ]


# The approval's answer in the transcript


async def test_the_transcript_says_how_an_approval_was_answered(tmp_path: Path) -> None:
    async with running(tmp_path, remove_stream()) as (app, pilot):
        await until_question(app, pilot)
        await pilot.press("right", "enter")  # Once
        await settle(app, pilot)
        assert "approved once: stream rm -- ORDERS" in app.run_screen.view.transcript.text()


async def test_the_transcript_says_an_approval_was_declined(tmp_path: Path) -> None:
    async with running(tmp_path, remove_stream()) as (app, pilot):
        await until_question(app, pilot)
        await pilot.press("enter")  # No
        await settle(app, pilot)
        text = app.run_screen.view.transcript.text()
        assert "declined: stream rm -- ORDERS" in text
        assert "<- declined: the operator declined" in text


# The chat bar


async def finish_first_turn(app: FiskApp, bridge: HeldBridge) -> None:
    bridge.turn_end.set_result(RunResult(Completed("done"), session_id=""))
    await app.workers.wait_for_complete()


async def test_an_unknown_command_keeps_the_typed_text() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        await finish_first_turn(app, bridge)
        await pilot.pause()
        await send(app, pilot, "/foo bar")
        await pilot.pause()
        assert app.run_screen.chat.value == "/foo bar"
        assert not app.run_screen.turn_running


async def test_up_recalls_a_doubled_slash_as_typed() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        await finish_first_turn(app, bridge)
        await pilot.pause()
        await send(app, pilot, "//slash text")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "> /slash text" in app.run_screen.view.transcript.text()
        app.run_screen.chat.focus()
        await pilot.press("up")
        assert app.run_screen.chat.value == "//slash text"


# The stop toast


async def test_the_press_again_toast_goes_when_the_turn_has_stopped() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert any("Ctrl-C again" in toast for toast in toasts(app))
        bridge.turn_end.set_result(RunResult(Suspended(), session_id="s1"))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.run_screen.run_state is RunState.SUSPENDED
        assert not any("Ctrl-C again" in toast for toast in toasts(app))


# n / N say where they are


async def test_n_and_capital_n_say_which_match_of_how_many() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    posted: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=posted.append) as pilot:
        bridge.emit(TextEvent("apple\nbanana\napple pie\napple tart"))
        await pilot.pause()
        view = app.run_screen.view
        view.focus()
        assert view.search("apple") == 3
        await pilot.press("n")
        await pilot.press("N")
        await pilot.pause()
        # The hook sees a bubbling message at every node it reaches: count each once.
        shown = {id(m): m for m in posted if isinstance(m, TranscriptView.MatchShown)}
        positions = [m.position for m in shown.values()]
        assert positions == ["2 of 3", "1 of 3"]
        assert "2 of 3" in toasts(app)


# The help at 80 columns


async def test_the_help_fits_80_columns() -> None:
    app = FiskApp(HeldBridge(), SETUP)
    async with app.run_test(size=NARROW) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.query_one("#help-text", Static)
        width = text.content_region.width
        assert 0 < width <= NARROW[0]
        lines = str(text.render()).splitlines()
        assert max(len(line) for line in lines) <= width
        assert "(tools, counters, turns to jump to)" in " ".join(" ".join(lines).split())


# Once-per-conversation warnings


async def test_tools_sent_directly_is_said_once_per_conversation() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        warning = WarningEvent(WarningKind.TOOLS_SENT_DIRECTLY, name="llm.provider", count=90)
        bridge.emit(warning)
        bridge.emit(warning)
        await pilot.pause()
        warnings = [
            block
            for block in app.run_screen.view.transcript.blocks
            if block.kind is BlockKind.WARNING
        ]
        assert len(warnings) == 1


# The activity line


async def test_the_status_bar_says_the_turn_waits_for_the_model_and_counts() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        # The seconds shown are the ticks this test gives, not the wall clock's (which may have
        # ticked once already on a busy machine).
        screen.ticker.pause()
        screen.activity_seconds = 0
        screen._tick()
        screen._tick()
        screen._tick()
        await pilot.pause()
        assert "[running]  waiting for the model 3s" in status_text(app)
        bridge.emit(ToolResultEvent("t1", "hi"))
        await pilot.pause()
        assert "waiting for the model 0s" in status_text(app)


def test_the_status_line_drops_its_least_parts_first_to_keep_state_and_help() -> None:
    line = StatusLine(
        RunState.RUNNING,
        Counters(),
        model="claude-sonnet-4-5-20250929",
        session="2a9Wsnapshotsession00000000",
        activity="stream rm -- ORDERS --force --timeout 30s --retries 3 --verbose",
        elapsed=12,
        help_key="F1",
    )
    text = line.text(78)
    assert len(text) <= 78
    assert text.startswith("[running]")
    assert text.endswith("F1 help")
    assert "12s" in text
    assert "session=" not in text
    assert len(line.text(200)) > 78


async def test_at_80_columns_the_status_bar_keeps_the_state_and_the_hint() -> None:
    setup = replace(SETUP, model="claude-sonnet-4-5-20250929-with-a-long-name")
    app = FiskApp(HeldBridge(), setup)
    async with app.run_test(size=NARROW) as pilot:
        await pilot.pause()
        bar = app.run_screen.query_one("#status", Static)
        text = status_text(app)
        assert len(text) <= bar.content_region.width
        assert text.lstrip().startswith("[running]")
        assert text.endswith("F1 help")


# The side panel at 80x24


async def test_the_side_panel_is_a_narrow_strip_that_scrolls_at_80x24() -> None:
    tools = tuple(ToolRow(f"tool_{n}", "ops", gated=n % 3 == 0) for n in range(20))
    app = FiskApp(HeldBridge(), replace(SETUP, tools=tools))
    async with app.run_test(size=NARROW) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        panel = app.run_screen.side_panel
        assert panel.display
        assert panel.outer_size.width <= 32
        assert panel.max_scroll_y > 0
        panel.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        turns = panel.query_one("#turns")
        assert panel.region.contains_region(turns.region)
        assert "budget used" in side_facts(app)


def side_facts(app: FiskApp) -> str:
    return str(app.run_screen.side_panel.query_one("#side-facts", Static).render())


async def test_the_side_panel_keeps_its_width_on_a_wide_terminal() -> None:
    app = FiskApp(HeldBridge(), SETUP)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        assert app.run_screen.side_panel.outer_size.width == 48


async def test_opening_and_closing_the_side_panel_keeps_the_tail_in_view(tmp_path: Path) -> None:
    # At 80 columns the panel narrows the transcript, so its rows re-wrap taller.
    long_answer = "\n\n".join(f"paragraph {n} " + "word " * 14 for n in range(60))
    async with running(tmp_path, [answer(long_answer)]) as (app, pilot):
        await settle(app, pilot)
        view = app.run_screen.view
        for _ in range(2):
            await pilot.press("f2")
            await settle(app, pilot)
            assert view.max_scroll_y > 0
            assert view.scroll_offset.y == view.max_scroll_y
            assert not app.run_screen.new_output_below.display
