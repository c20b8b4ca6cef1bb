"""The blank rows around quotes, lists and code in the transcript."""

from __future__ import annotations

from fisk_ai.agent.events import TextEvent
from fisk_ai.tui.transcript import Transcript


def test_a_quote_after_a_paragraph_opens_with_its_text_not_an_empty_bar() -> None:
    text = "Here is the plan.\n\n> a quoted line\n>\n> and another\n\n- one\n- two\n\n```\nls\n```"
    transcript = Transcript()
    transcript.add_event(TextEvent(text))
    rows = [row.text for row in transcript.rows(0, 100, 60)]
    assert rows == [
        "Here is the plan.",
        "",
        "\u2502 a quoted line",
        "\u2502",
        "\u2502 and another",
        "",
        "\u2022 one",
        "\u2022 two",
        "",
        "  ls",
    ]
