from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fisk_ai.agent.events import PromptEvent, TextEvent
from fisk_ai.tui.markdown import Emphasis, looks_like_markdown
from fisk_ai.tui.transcript import Row, Transcript
from tests.tui.viewer_app import ViewerApp

SIZE = (60, 20)
SnapCompare = Callable[..., bool]

ANSWER = """# Streams
There are **three** streams and `ORDERS` is *lagging*:

- ORDERS
- INVOICES
  1. nested

```
nats stream info ORDERS
```
See [the docs](https://docs.example) for more."""


def narration_rows(text: str, width: int = 60) -> list[Row]:
    transcript = Transcript()
    transcript.add_event(TextEvent(text))
    return transcript.rows(0, 100, width)


def texts(rows: list[Row]) -> list[str]:
    return [row.text for row in rows]


def screen_text(app: ViewerApp) -> str:
    view = app.view
    return "\n".join(strip.text for strip in (view.render_line(y) for y in range(view.size.height)))


def test_headings_lists_and_code_are_drawn_without_their_markers() -> None:
    rows = texts(narration_rows(ANSWER))
    assert rows[:2] == ["Streams", "There are three streams and ORDERS is lagging:"]
    assert "\u2022 ORDERS" in rows
    assert "  1. nested" in rows
    assert "  nats stream info ORDERS" in rows
    assert not any(row.startswith(("#", "```", "- ")) for row in rows)


def test_emphasis_is_a_style_beside_the_text() -> None:
    row = narration_rows(ANSWER)[1]
    assert ("three", Emphasis.BOLD) in row.spans
    assert ("ORDERS", Emphasis.CODE) in row.spans
    assert ("lagging", Emphasis.ITALIC) in row.spans


def test_a_link_shows_its_text_and_its_address() -> None:
    assert "See the docs (https://docs.example) for more." in texts(narration_rows(ANSWER))


def test_a_line_break_the_model_wrote_stays_a_line_break() -> None:
    assert texts(narration_rows("first *line*\nsecond line")) == ["first line", "second line"]


def test_plain_prose_is_not_parsed_as_markdown() -> None:
    assert not looks_like_markdown("The streams are fine, all 3 of them.")
    assert looks_like_markdown("- a list")
    transcript = Transcript()
    transcript.add_event(TextEvent("The streams are fine."))
    assert not transcript.blocks[0].markdown


def test_a_wrapped_list_item_hangs_under_its_text() -> None:
    rows = texts(narration_rows("- " + "word " * 12, width=24))
    assert rows[0].startswith("\u2022 word")
    assert all(row.startswith("  word") for row in rows[1:])
    assert all(len(row) <= 24 for row in rows)


def test_copy_is_the_markdown_as_written() -> None:
    transcript = Transcript()
    transcript.add_event(TextEvent(ANSWER))
    assert transcript.text() == ANSWER


def test_search_finds_the_source_and_points_at_its_row() -> None:
    transcript = Transcript()
    transcript.add_events([PromptEvent("p"), TextEvent(ANSWER)])
    matches = transcript.search("nested")
    assert len(matches) == 1
    row = transcript.line_row(matches[0].line, 60)
    assert transcript.rows(row, 1, 60)[0].text == "  1. nested"


async def test_brackets_in_narration_show_as_typed(tmp_path: Path) -> None:
    text = "Use `x[0]` or [0] and [/] and [bold]not bold[/bold] and [/"
    app = ViewerApp([TextEvent(text)], tmp_path)
    async with app.run_test(size=SIZE):
        assert app.view.transcript.blocks[0].markdown
        assert "Use x[0] or [0] and [/] and [bold]not bold[/bold] and [/" in screen_text(app)


async def test_a_resize_rewraps_markdown_narration(tmp_path: Path) -> None:
    app = ViewerApp([TextEvent("**Summary**: " + "word " * 40)], tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        wide = app.view.virtual_size.height
        await pilot.resize_terminal(30, 20)
        await pilot.pause()
        assert app.view.virtual_size.height > wide
        assert all(len(line.rstrip()) <= 28 for line in screen_text(app).splitlines())
        assert screen_text(app).startswith("Summary: word")
        assert app.view.copy_all().startswith("**Summary**: word word")


def test_markdown_narration_snapshot(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """A heading, emphasis, a nested list, a code block and a link, drawn as markdown."""
    app = ViewerApp([PromptEvent("what streams are there?"), TextEvent(ANSWER)], tmp_path)
    assert snap_compare(app, terminal_size=SIZE)
