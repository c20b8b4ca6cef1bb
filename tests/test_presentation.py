from datetime import timedelta

from fisk_ai.agent.events import ToolCallEvent, ToolResultEvent
from fisk_ai.llm.types import Usage
from fisk_ai.presentation import (
    RunSummary,
    summary_line,
    thinking_lines,
    tool_call_line,
    tool_result_text,
)
from fisk_ai.tools.base import ExecRecord

JOKE = ToolCallEvent(
    "tu_1",
    "say",
    {"message": "Why did the cow go to space?"},
    ("say", "--", "Why did the cow go to space?"),
)


def test_a_command_call_shows_its_command_line() -> None:
    assert tool_call_line(JOKE) == "-> say -- Why did the cow go to space?"


def test_a_narrow_terminal_gets_the_short_form() -> None:
    assert tool_call_line(JOKE, width=30) == "-> say -- Why did th...space?"


def test_flag_values_are_shortened_too() -> None:
    call = ToolCallEvent("t", "x", {}, ("x", "--subject=a.very.long.subject.name.here", "--force"))
    assert tool_call_line(call, width=20) == "-> x --subject=a.very.lon...e.here --force"


def test_a_tool_without_a_command_shows_sorted_arguments() -> None:
    call = ToolCallEvent("t", "memory_read", {"z": 1, "a": "b"})
    assert tool_call_line(call) == '-> memory_read {"a":"b","z":1}'


def test_control_sequences_in_arguments_cannot_reach_the_terminal() -> None:
    call = ToolCallEvent("t", "say", {}, ("say", "--", "\x1b[2Jgone\x07"))
    assert "\x1b" not in tool_call_line(call) and "\x07" not in tool_call_line(call)


def test_results_keep_a_non_zero_exit_and_name_silence() -> None:
    failed = ToolResultEvent("t", "boom\n", exec=ExecRecord("x", 2))
    silent = ToolResultEvent("t", "", exec=ExecRecord("x", 0))
    error = ToolResultEvent("t", "unknown tool", is_error=True)
    assert tool_result_text(failed) == "(exit 2) boom\n"
    assert tool_result_text(silent) == "(no output)"
    assert tool_result_text(error) == "(error) unknown tool"


def test_thinking_lines_carry_the_bubble() -> None:
    assert thinking_lines("one\n\ntwo") == ["\N{THOUGHT BALLOON} one", "\N{THOUGHT BALLOON} two"]


def test_the_summary_line_matches_the_user_guide() -> None:
    summary = RunSummary(
        suspended=False,
        session="",
        model="claude-haiku-4-5-20251001",
        llm_calls=2,
        tool_calls=2,
        remote_tool_calls=0,
        usage=Usage(3536, 113),
        latency=timedelta(seconds=3.6134),
    )
    assert summary_line(summary) == (
        "Run summary: model=claude-haiku-4-5-20251001 llm_calls=2 tool_calls=2 "
        "tokens=3536/113 thinking=0 latency=3.613s"
    )


def test_a_suspended_run_says_so_and_names_its_session() -> None:
    summary = RunSummary(
        suspended=True,
        session="2fT",
        model="m",
        llm_calls=1,
        tool_calls=0,
        remote_tool_calls=0,
        usage=Usage(10, 2, cache_read_tokens=5),
        latency=timedelta(0),
    )
    assert summary_line(summary).startswith("Run suspended: session=2fT model=m ")
    assert " cached=5 " in summary_line(summary)


def test_thinking_comes_right_after_tokens_when_cache_tiers_are_shown() -> None:
    summary = RunSummary(
        suspended=False,
        session="",
        model="",
        llm_calls=1,
        tool_calls=0,
        remote_tool_calls=0,
        usage=Usage(10, 300, cache_read_tokens=5000, cache_create_tokens=700, thinking_tokens=120),
        latency=timedelta(0),
    )
    assert "tokens=10/300 thinking=120 cached=5000 cache_write=700 latency=" in summary_line(
        summary, verbose=True
    )
