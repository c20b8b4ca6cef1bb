from __future__ import annotations

from fisk_ai.agent.events import (
    PromptEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from fisk_ai.tools.base import ExecRecord
from fisk_ai.tui.transcript import BlockKind, RowKind, Transcript, wrap_line
from tests.tui.sample import conversation, long_output

WIDTH = 60


def shown(transcript: Transcript, width: int = WIDTH) -> list[str]:
    return [row.text for row in transcript.rows(0, 10_000, width)]


def built() -> Transcript:
    transcript = Transcript()
    transcript.add_events(conversation())
    return transcript


def test_tool_call_line_has_sorted_arguments_when_no_command() -> None:
    transcript = Transcript()
    transcript.add_event(ToolCallEvent("c", "memory_read", {"key": "a", "all": True}))
    assert transcript.lines == ['-> memory_read {"all":true,"key":"a"}']


def test_a_long_output_is_folded_by_default_under_its_first_lines() -> None:
    transcript = Transcript()
    transcript.add_event(long_output(20))
    assert shown(transcript) == [
        "<- exit 0 \u00b7 20 lines",
        "row 0",
        "row 1",
        "row 2",
        "row 3",
        "+ 16 more lines (ctrl-o to expand)",
    ]


def test_a_short_output_is_shown_whole_without_a_fold_line() -> None:
    rows = shown(built())
    assert rows[rows.index("<- exit 0 \u00b7 3 lines") + 1 :][:3] == [
        "ORDERS",
        "INVOICES",
        "SHIPPING",
    ]
    assert not any(row.startswith("+ ") and "more line" in row for row in rows)


def test_only_the_newest_fold_line_names_ctrl_o() -> None:
    transcript = Transcript()
    transcript.add_events([long_output(10), long_output(12)])
    folds = [row for row in shown(transcript) if row.startswith("+ ")]
    assert folds == [
        "+ 6 more lines (Z in the transcript expands all)",
        "+ 8 more lines (ctrl-o to expand)",
    ]


def test_the_last_result_toggles_on_its_own() -> None:
    transcript = Transcript()
    transcript.add_events([long_output(10), long_output(12)])
    assert transcript.toggle_last_result() is False
    rows = shown(transcript)
    assert "row 11" in rows
    assert "+ 6 more lines (Z in the transcript expands all)" in rows
    assert transcript.toggle_last_result() is True


def test_with_no_long_result_there_is_nothing_to_toggle() -> None:
    assert built().toggle_last_result() is None


def test_non_zero_exit_and_silent_success_are_kept() -> None:
    transcript = Transcript(output_folded=False)
    transcript.add_event(ToolResultEvent("a", "boom", exec=ExecRecord("x", 2)))
    transcript.add_event(ToolResultEvent("b", "", exec=ExecRecord("x", 0)))
    assert transcript.lines == [
        "<- failed (exit 2) \u00b7 1 line",
        "boom",
        "<- exit 0 \u00b7 no output",
    ]


def test_thinking_long_or_short_is_folded_away_unless_asked_for() -> None:
    transcript = Transcript()
    transcript.add_event(ThinkingEvent("\n".join(f"thought {n}" for n in range(6))))
    transcript.add_event(ThinkingEvent("one short thought"))
    assert shown(transcript) == [
        "+ 6 lines of thinking (z to expand)",
        "+ 1 line of thinking (z to expand)",
    ]
    asked = Transcript(thinking_folded=False)
    asked.add_event(ThinkingEvent("one short thought"))
    assert shown(asked)[0].endswith("one short thought")


def test_z_expands_all_thinking_and_again_folds_it() -> None:
    transcript = built()
    assert transcript.toggle_thinking() is False
    assert any(text.endswith("step 7 of the plan") for text in shown(transcript))
    assert transcript.toggle_thinking() is True
    assert "+ 7 lines of thinking (z to expand)" in shown(transcript)


def test_capital_z_expands_all_output_including_errors() -> None:
    transcript = built()
    assert transcript.toggle_output() is False
    rows = shown(transcript)
    assert "SHIPPING" in rows
    assert "<- error \u00b7 1 line" in rows
    assert "stream not found" in rows


def test_toggling_one_block_leaves_the_others_folded() -> None:
    transcript = Transcript()
    first = transcript.add_block(BlockKind.TOOL_OUTPUT, ["<-", "a", "b"], header=1, foldable=True)
    transcript.add_block(BlockKind.TOOL_OUTPUT, ["<-", "c", "d"], header=1, foldable=True)
    transcript.toggle_block(first)
    assert shown(transcript) == [
        "<-",
        "a",
        "b",
        "<-",
        "+ 2 more lines (Z in the transcript expands all)",
    ]


def test_search_is_case_insensitive_and_counts_lines_inside_folds() -> None:
    matches = built().search("orders")
    assert [match.line for match in matches] == [
        index for index, line in enumerate(built().lines) if "ORDERS" in line
    ]
    assert len(matches) == 2


def test_an_empty_query_matches_nothing() -> None:
    assert built().search("") == []


def test_revealing_a_match_unfolds_its_block() -> None:
    transcript = built()
    match = next(m for m in transcript.search("invoices") if transcript.lines[m.line] == "INVOICES")
    transcript.reveal(match.line)
    assert "INVOICES" in shown(transcript)
    assert transcript.rows(transcript.line_row(match.line, WIDTH), 1, WIDTH)[0].text == "INVOICES"


def test_copy_leaves_out_folded_content_and_wrap_breaks() -> None:
    transcript = Transcript()
    transcript.add_prompt("x" * 150)
    transcript.add_event(long_output(9))
    assert len(shown(transcript, 40)) > 3
    assert (
        transcript.text()
        == "> " + "x" * 150 + "\n<- exit 0 \u00b7 9 lines\nrow 0\nrow 1\nrow 2\nrow 3"
    )


def test_copy_of_folded_thinking_leaves_nothing() -> None:
    transcript = Transcript()
    transcript.add_prompt("hi")
    transcript.add_thinking("\n".join(f"t{n}" for n in range(8)))
    assert transcript.text() == "> hi"


def test_markup_and_escapes_in_tool_output_are_plain_text() -> None:
    transcript = Transcript(output_folded=False)
    output = "[/] [bold]x[/bold] [0] \x1b[31mred\x1b[0m \x1b]0;title\x07"
    transcript.add_event(ToolResultEvent("c", output, exec=ExecRecord("x", 0)))
    assert transcript.lines[1] == "[/] [bold]x[/bold] [0] red "


def test_a_width_change_rewraps_without_rebuilding() -> None:
    transcript = Transcript()
    transcript.add_event(TextEvent("word " * 30))
    narrow = transcript.row_count(20)
    wide = transcript.row_count(100)
    assert narrow > wide == 2
    assert all(len(text) <= 20 for text in shown(transcript, 20))
    assert transcript.row_count(20) == narrow


def test_prose_gets_a_blank_row_before_it() -> None:
    transcript = Transcript()
    transcript.add_event(PromptEvent("hi"))
    transcript.add_event(TextEvent("hello"))
    rows = transcript.rows(0, 10, WIDTH)
    assert [(row.text, row.kind) for row in rows] == [
        ("> hi", RowKind.PROMPT),
        ("", RowKind.BLANK),
        ("hello", RowKind.NARRATION),
    ]


def test_final_answer_is_marked() -> None:
    transcript = Transcript()
    transcript.add_event(TextEvent("the answer", final=True))
    assert transcript.lines == ["--- answer ---", "the answer"]


def test_rows_from_the_middle_of_a_long_block() -> None:
    transcript = Transcript(output_folded=False)
    output = "\n".join(f"line {n}" for n in range(1000))
    transcript.add_event(ToolResultEvent("c", output, exec=ExecRecord("x", 0)))
    assert [row.text for row in transcript.rows(501, 2, WIDTH)] == ["line 500", "line 501"]


def test_wrap_prefers_spaces_and_splits_long_words() -> None:
    assert wrap_line("aaa bbb ccc", 7) == ["aaa bbb", "ccc"]
    assert wrap_line("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert wrap_line("日本語テキスト", 6) == ["日本語", "テキス", "ト"]
