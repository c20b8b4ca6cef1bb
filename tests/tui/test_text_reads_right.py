"""Issue 20, text that reads right: prose wrapped at spaces by cell width whatever its
characters, tables fitted to the width, code colored and indented when it wraps, search marking
the words it found, and tool output folded only when it is long."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.style import Style

from fisk_ai.agent.events import Event, PromptEvent, TextEvent, ToolCallEvent, ToolResultEvent
from fisk_ai.tools.base import ExecRecord
from fisk_ai.tui.markdown import CODE_INDENT, Emphasis, code_spans
from fisk_ai.tui.transcript import Row, Transcript, fit_columns, wrap_line
from tests.tui.awkward_texts import COW, EM_DASH_PROSE, LONG_TABLE, PYTHON_BLOCK
from tests.tui.sample import long_output
from tests.tui.viewer_app import ViewerApp


def narration(text: str, width: int) -> list[Row]:
    transcript = Transcript()
    transcript.add_event(TextEvent(text))
    return transcript.rows(0, transcript.row_count(width), width)


def texts(rows: list[Row]) -> list[str]:
    return [row.text for row in rows]


def shown(events: list[Event], width: int = 80) -> list[str]:
    transcript = Transcript()
    transcript.add_events(events)
    return texts(transcript.rows(0, transcript.row_count(width), width))


def screen_text(app: ViewerApp) -> str:
    view = app.view
    return "\n".join(strip.text for strip in (view.render_line(y) for y in range(view.size.height)))


# Wrapping


@pytest.mark.parametrize("width", [80, 160])
def test_prose_with_em_dashes_and_curly_quotes_wraps_only_at_spaces(width: int) -> None:
    rows = texts(narration(EM_DASH_PROSE * 2, width))
    assert len(rows) > 1
    assert " ".join(rows) == EM_DASH_PROSE * 2
    words = set((EM_DASH_PROSE * 2).split(" "))
    assert all(word in words for row in rows for word in row.split(" "))
    assert all(cell_len(row) <= width for row in rows)


def test_a_line_of_wide_characters_wraps_by_cells() -> None:
    line = "\u6771\u4eac\u306e\u30b5\u30fc\u30d0\u30fc \u306f \u5143\u6c17\u3067\u3059 " * 4
    rows = wrap_line(line.strip(), 20)
    assert all(cell_len(row) <= 20 for row in rows)
    assert " ".join(rows) == line.strip()


def test_a_word_of_wide_characters_longer_than_a_row_is_cut_between_characters() -> None:
    assert wrap_line("\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8", 5) == [
        "\u65e5\u672c",
        "\u8a9e\u30c6",
        "\u30ad\u30b9",
        "\u30c8",
    ]


def test_combining_marks_take_no_cell_and_stay_with_their_letter() -> None:
    word = "cafe\u0301"
    rows = wrap_line(f"{word} {word} {word}", 10)
    assert rows == [f"{word} {word}", word]


def test_an_emoji_sequence_is_never_split() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    rows = wrap_line(family * 3, 4)
    assert rows == [family * 2, family]


# Tables


def test_a_long_table_fits_80_columns_with_its_cells_wrapped() -> None:
    rows = texts(narration(LONG_TABLE, 80))
    assert all(cell_len(row) <= 80 for row in rows)
    notes = [row.rsplit("\u2502", 1)[1].strip() for row in rows if "\u2502" in row]
    assert "Healthy \u2014 consumers keep up with every subject it holds" in " ".join(notes)
    assert len(rows) > 6


def test_a_fitted_table_has_no_blank_rows() -> None:
    rows = texts(narration(LONG_TABLE, 80))
    assert all(row.replace("\u2502", "").strip() for row in rows)


def test_a_fitted_table_keeps_its_columns_lined_up_and_aligned() -> None:
    rows = texts(narration(LONG_TABLE, 80))
    bars = {tuple(i for i, c in enumerate(row) if c in "\u2502\u253c") for row in rows}
    assert len(bars) == 1
    before_notes = bars.pop()[3]
    # The Messages column is right-aligned: each count ends where the column does.
    for count in ("1,260", "88", "12,004,311"):
        row = next(row for row in rows if f" {count} " in row)
        assert row.index(f" {count} ") + len(count) + 2 == before_notes


def test_a_table_that_fits_keeps_its_natural_widths() -> None:
    assert fit_columns([6, 4], [6, 4], 80) == [6, 4]


def test_shrunk_columns_keep_their_longest_word_when_the_room_allows() -> None:
    widths = fit_columns([12, 90], [12, 9], 60)
    assert widths[0] == 12
    assert sum(widths) <= 60


# Code blocks


def code_rows(width: int) -> list[Row]:
    return [row for row in narration(PYTHON_BLOCK, width) if row.text.startswith(CODE_INDENT)]


def test_a_python_block_is_colored_by_token() -> None:
    spans = [span for row in code_rows(120) for span in row.spans]
    assert ("def", Emphasis.KEYWORD) in spans
    assert ("lagging", Emphasis.DEFINITION) in spans
    assert ("30", Emphasis.NUMBER) in spans
    assert any(emphasis & Emphasis.COMMENT for _, emphasis in spans)


def test_a_string_in_a_json_block_is_marked_as_one() -> None:
    [row] = code_spans(['{"stream": "ORDERS"}'], "json") or [[]]
    assert ('"ORDERS"', Emphasis.STRING) in row


def test_a_wrapped_code_line_keeps_the_blocks_indent() -> None:
    rows = code_rows(60)
    comment = [row for row in rows if any(e & Emphasis.COMMENT for _, e in row.spans)]
    assert len(comment) > 1
    assert all(row.text.startswith(CODE_INDENT) and row.text[2] != " " for row in comment[1:])
    assert all(cell_len(row.text) <= 60 for row in rows)


def test_a_block_in_an_unknown_language_is_drawn_plain() -> None:
    rows = narration("```nosuchlanguage\nx = 1 if y else 2\n```", 80)
    assert texts(rows) == ["  x = 1 if y else 2"]
    assert all(emphasis in (Emphasis.NONE, Emphasis.CODE) for _, emphasis in rows[0].spans)


async def test_a_keyword_is_drawn_in_another_color_than_the_code_around_it(
    tmp_path: Path,
) -> None:
    app = ViewerApp([TextEvent(PYTHON_BLOCK)], tmp_path)
    async with app.run_test(size=(100, 24)):
        line = next(
            strip
            for strip in (app.view.render_line(y) for y in range(app.view.size.height))
            if strip.text.startswith("  def ")
        )
        colors = {segment.text: segment.style.color for segment in line if segment.style}
        assert colors["def"] != next(color for text, color in colors.items() if "(" in text)


# Search


def segments_marked(app: ViewerApp, mark: Style) -> list[str]:
    view = app.view
    found = []
    for y in range(view.size.height):
        for segment in view.render_line(y):
            style = segment.style
            if style is not None and style.bgcolor == mark.bgcolor and segment.text.strip():
                found.append(segment.text)
    return found


async def test_search_marks_the_words_of_every_match_in_view(tmp_path: Path) -> None:
    events: list[Event] = [
        PromptEvent("which streams lag?"),
        TextEvent("ORDERS is fine.\nINVOICES lags; **invoices** need a restart."),
        ToolCallEvent("c", "stream_ls", {}, ("stream", "ls")),
        ToolResultEvent("c", "ORDERS\nINVOICES", exec=ExecRecord("stream ls", 0)),
    ]
    app = ViewerApp(events, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.view.search("invoices") == 2
        await pilot.pause()
        others = app.view.get_component_rich_style("transcript--match")
        current = app.view.get_component_rich_style("transcript--match-current")
        # The current match is the narration's line, both its words; the output's is another.
        assert [text.casefold() for text in segments_marked(app, current)] == ["invoices"] * 2
        assert segments_marked(app, others) == ["INVOICES"]


async def test_the_current_match_moves_with_n(tmp_path: Path) -> None:
    events: list[Event] = [TextEvent("first ORDERS line\nsecond orders line")]
    app = ViewerApp(events, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.view.search("orders")
        await pilot.press("n")
        current = app.view.get_component_rich_style("transcript--match-current")
        lines = [app.view.render_line(y) for y in range(app.view.size.height)]
        marked_rows = [
            strip.text
            for strip in lines
            if any(s.style and s.style.bgcolor == current.bgcolor for s in strip)
        ]
        assert [row.strip() for row in marked_rows] == ["second orders line"]


async def test_clearing_the_search_takes_its_marks_off(tmp_path: Path) -> None:
    app = ViewerApp([TextEvent("ORDERS and orders")], tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.view.search("orders")
        app.view.clear_search()
        await pilot.pause()
        others = app.view.get_component_rich_style("transcript--match")
        current = app.view.get_component_rich_style("transcript--match-current")
        assert segments_marked(app, others) == segments_marked(app, current) == []


# Tool output


def test_a_two_line_result_is_shown_whole() -> None:
    result = ToolResultEvent("c", "ORDERS\nINVOICES", exec=ExecRecord("stream ls", 0))
    assert shown([result]) == ["<- exit 0 \u00b7 2 lines", "ORDERS", "INVOICES"]


def test_a_cow_is_shown_whole() -> None:
    result = ToolResultEvent("c", COW, exec=ExecRecord("say", 0))
    rows = shown([result])
    assert rows[1:] == COW.rstrip("\n").split("\n")


def test_a_twenty_line_result_shows_its_first_lines_and_a_fold_line() -> None:
    assert shown([long_output(20)]) == [
        "<- exit 0 \u00b7 20 lines",
        "row 0",
        "row 1",
        "row 2",
        "row 3",
        "+ 16 more lines (ctrl-o to expand)",
    ]


def test_a_result_of_few_but_very_long_lines_folds_with_its_lines_cut_to_a_row() -> None:
    environment = " ".join(f"VARIABLE_{n}=value-{n}" for n in range(200))
    result = ToolResultEvent("c", f"{environment}\n{environment}", exec=ExecRecord("env", 0))
    rows = shown([result])
    assert rows[0] == "<- exit 0 \u00b7 2 lines"
    assert rows[1].endswith("\u2026")
    assert cell_len(rows[1]) <= 80
    assert rows[2:] == ["+ 1 more line (ctrl-o to expand)"]


def test_a_search_hit_in_a_cut_preview_line_unfolds_the_result() -> None:
    transcript = Transcript()
    transcript.add_event(ToolResultEvent("c", "x " * 100 + "needle\n" + "row\n" * 12))
    [match] = transcript.search("needle")
    transcript.reveal(match.line)
    rows = texts(transcript.rows(0, transcript.row_count(80), 80))
    assert any(row.endswith("needle") for row in rows)


async def test_toggle_last_output_expands_the_newest_result_and_folds_it_again(
    tmp_path: Path,
) -> None:
    app = ViewerApp([PromptEvent("show me"), long_output(12), long_output(20)], tmp_path)
    async with app.run_test(size=(80, 40)) as pilot:
        assert "row 19" not in screen_text(app)
        assert app.view.toggle_last_output()
        await pilot.pause()
        text = screen_text(app)
        assert "row 19" in text
        assert "+ 8 more lines (Z in the transcript expands all)" in text
        assert app.view.toggle_last_output()
        await pilot.pause()
        assert "+ 16 more lines (ctrl-o to expand)" in screen_text(app)


async def test_ctrl_o_in_the_transcript_expands_the_last_result(tmp_path: Path) -> None:
    app = ViewerApp([long_output(20)], tmp_path)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.press("ctrl+o")
        assert "row 19" in screen_text(app)


async def test_with_no_long_result_toggle_last_output_says_there_was_none(
    tmp_path: Path,
) -> None:
    result = ToolResultEvent("c", "ORDERS", exec=ExecRecord("stream ls", 0))
    app = ViewerApp([result], tmp_path)
    async with app.run_test(size=(80, 24)):
        assert not app.view.toggle_last_output()


async def test_an_expanded_long_result_shows_from_its_header(tmp_path: Path) -> None:
    app = ViewerApp([PromptEvent("show me"), long_output(100)], tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.view.toggle_last_output()
        await pilot.pause()
        assert screen_text(app).splitlines()[0].startswith("<- exit 0 \u00b7 100 lines")
