"""What a status message shows of an answer still being written: bounded as a Slack message
needs, the newest text kept."""

from __future__ import annotations

from fisk_ai.serve.slack.text import (
    WRITING_LIMIT,
    Phase,
    next_phase,
    status_blocks,
    writing_shown,
)


def test_an_answer_within_the_limit_is_shown_whole() -> None:
    assert writing_shown("Three streams have no consumers.") == "Three streams have no consumers."


def test_a_long_answer_shows_its_newest_text_after_an_ellipsis() -> None:
    written = "x" * WRITING_LIMIT + "the newest words"

    shown = writing_shown(written)

    assert len(shown) == WRITING_LIMIT
    assert shown.startswith("\u2026") and shown.endswith("the newest words")


def test_a_long_answer_is_shown_from_the_start_of_a_line_when_one_is_near() -> None:
    newest_lines = "## Streams\n" + "ORDERS has no consumers.\n" * 80
    written = "old " * WRITING_LIMIT + "half a line\n" + newest_lines

    assert writing_shown(written) == "\u2026" + newest_lines


def test_the_status_shows_the_text_between_its_line_and_the_stop_button() -> None:
    blocks = status_blocks("Thinking...", turn="t1", stoppable=True, writing="Three str")

    assert [block["type"] for block in blocks] == ["section", "markdown", "actions"]
    assert blocks[1]["text"] == "Three str"


def test_the_status_shows_no_text_block_while_nothing_is_written() -> None:
    blocks = status_blocks("Thinking...", turn="t1", stoppable=True, writing="  ")

    assert [block["type"] for block in blocks] == ["section", "actions"]


def test_a_stop_acknowledged_stays_shown_while_the_run_finishes_its_step() -> None:
    assert next_phase(Phase.STOPPING, Phase.CALLING_TOOLS) is Phase.STOPPING


def test_the_status_follows_the_run_until_a_stop_is_pressed() -> None:
    assert next_phase(Phase.THINKING, Phase.CALLING_TOOLS) is Phase.CALLING_TOOLS
