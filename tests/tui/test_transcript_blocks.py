"""Issue 14, a transcript that looks designed: result headers, ask_human as a question and its
answer, thinking folded away unless asked for, markdown tables laid out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from fisk_ai.agent.events import TextEvent, ThinkingEvent, ToolCallEvent, ToolResultEvent
from fisk_ai.tools.base import ExecRecord
from fisk_ai.tui.transcript import BlockKind, Transcript
from fisk_ai.workstation.app import FiskApp
from tests.screens.held_bridge import SETUP, SIZE, HeldBridge
from tests.tui.workstation_driver import screen_text

WIDTH = 80


def shown(transcript: Transcript) -> list[str]:
    return [row.text for row in transcript.rows(0, 10_000, WIDTH)]


def asked(name: str, arguments: Mapping[str, object], output: str) -> list[str]:
    transcript = Transcript()
    transcript.add_event(ToolCallEvent("q1", name, arguments))
    transcript.add_event(ToolResultEvent("q1", output))
    return shown(transcript)


# Result headers


def test_a_result_header_names_the_exit_the_duration_and_the_line_count() -> None:
    transcript = Transcript()
    transcript.add_event(ToolCallEvent("c1", "stream_ls", {}, ("stream", "ls")))
    output = ToolResultEvent("c1", "ORDERS\nINVOICES\n", exec=ExecRecord("stream ls", 0))
    transcript.add_event(output, seconds=4)
    assert shown(transcript) == [
        "-> stream ls",
        "<- exit 0 \u00b7 4s \u00b7 2 lines",
        "ORDERS",
        "INVOICES",
    ]


def test_a_silent_command_says_so_on_one_line_with_nothing_to_fold() -> None:
    transcript = Transcript()
    transcript.add_event(ToolResultEvent("c1", "", exec=ExecRecord("x", 0)), seconds=0)
    assert shown(transcript) == ["<- exit 0 \u00b7 <1s \u00b7 no output"]
    assert not transcript.blocks[0].foldable


def test_a_harness_error_says_error_in_its_header() -> None:
    transcript = Transcript(output_folded=False)
    transcript.add_event(ToolResultEvent("c1", "stream not found", is_error=True))
    assert transcript.blocks[0].kind is BlockKind.ERROR
    assert shown(transcript) == ["<- error \u00b7 1 line", "stream not found"]


async def test_the_run_screen_times_each_tool_call_for_its_header() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        bridge.emit(ToolCallEvent("t1", "ops_say", {"words": "hi"}, command=("say", "hi")))
        await pilot.pause()
        screen._tick()
        screen._tick()
        bridge.emit(ToolResultEvent("t1", "hi\n", exec=ExecRecord("say hi", 0)))
        await pilot.pause()
        assert "<- exit 0 \u00b7 2s \u00b7 1 line" in screen_text(app)


# ask_human


def test_a_confirm_question_shows_the_question_and_the_answer() -> None:
    rows = asked("ask_human_confirm", {"question": "Purge ORDERS?"}, '{"confirmed":true}')
    assert rows == ["? Purge ORDERS?", "= yes"]


def test_a_no_carries_its_reason() -> None:
    output = '{"confirmed":false,"reason":"the operator answered no"}'
    rows = asked("ask_human_confirm", {"question": "Purge ORDERS?"}, output)
    assert rows == ["? Purge ORDERS?", "= no (the operator answered no)"]


def test_a_select_question_lists_its_options_and_the_choice() -> None:
    arguments = {"question": "Which stream?", "options": ["ORDERS", "INVOICES"]}
    rows = asked("ask_human_select", arguments, '{"selected":"INVOICES"}')
    assert rows == ["? Which stream?", "  options: ORDERS, INVOICES", "= INVOICES"]


def test_an_input_question_left_unanswered_says_so() -> None:
    rows = asked("ask_human_input", {"question": "Subject?"}, '{"value":null}')
    assert rows == ["? Subject?", "= no answer"]


def test_a_question_that_failed_shows_as_an_error_result() -> None:
    transcript = Transcript(output_folded=False)
    transcript.add_event(ToolCallEvent("q1", "ask_human_input", {"question": ""}))
    transcript.add_event(ToolResultEvent("q1", "needs a question", is_error=True))
    assert shown(transcript)[1:] == ["<- error \u00b7 1 line", "needs a question"]


# Thinking


async def test_thinking_is_folded_away_on_the_run_screen_until_z() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        bridge.emit(ThinkingEvent("a private thought"))
        await pilot.pause()
        assert "a private thought" not in screen_text(app)
        assert "+ 1 line of thinking (z to expand)" in screen_text(app)
        app.run_screen.view.focus()
        await pilot.press("z")
        assert "a private thought" in screen_text(app)


async def test_thinking_is_shown_when_the_run_asked_for_it() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, replace(SETUP, thinking=True))
    async with app.run_test(size=SIZE) as pilot:
        bridge.emit(ThinkingEvent("a private thought"))
        await pilot.pause()
        assert "a private thought" in screen_text(app)


# Markdown tables


def table_rows(text: str) -> list[str]:
    transcript = Transcript()
    transcript.add_event(TextEvent(text))
    return shown(transcript)


def test_a_markdown_table_is_laid_out_in_aligned_columns() -> None:
    text = "| stream | msgs |\n|:--|--:|\n| ORDERS | 12 |\n| INVOICES | 3,400 |"
    assert table_rows(text) == [
        "stream   \u2502  msgs",
        "\u2500" * 9 + "\u253c" + "\u2500" * 6,
        "ORDERS   \u2502    12",
        "INVOICES \u2502 3,400",
    ]


async def test_a_table_in_an_answer_is_drawn_without_its_pipes() -> None:
    bridge = HeldBridge()
    app = FiskApp(bridge, SETUP)
    async with app.run_test(size=SIZE) as pilot:
        bridge.emit(TextEvent("| a | b |\n|---|---|\n| 1 | 2 |", final=True))
        await pilot.pause()
        text = screen_text(app)
        assert "a \u2502 b" in text
        assert "| a |" not in text
