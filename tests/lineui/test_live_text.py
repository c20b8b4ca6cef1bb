"""A model turn's text on the terminal as it arrives: what the screen shows at each step.

The stream is a StringIO, so rich renders for an 80x25 screen without color; ``screen`` plays
what was written the way a terminal does, so a test reads the screen an operator would see
rather than the bytes.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

from rich.console import Console
from rich.markdown import Markdown

from fisk_ai.agent.events import (
    StatusEvent,
    StatusPhase,
    TextDeltaEvent,
    TextEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
    ToolCallEvent,
)
from fisk_ai.lineui.surface import RESTART_NOTE, LiveText, StreamingLineSurface
from tests.lineui.terminal_screen import screen

WIDTH = 80
ANSWER = (
    "# Report\n\nThe cache is **untouched** and the fleet is healthy.\n\n"
    "- one\n- two\n\n```\ncode\n\nblock\n```\n\nThe end."
)


def rendered(markdown: str) -> list[str]:
    output = io.StringIO()
    Console(file=output, width=WIDTH, highlight=False).print(Markdown(markdown))
    return [line.rstrip() for line in output.getvalue().rstrip("\n").split("\n")]


def pieces(text: str, size: int) -> Iterable[str]:
    return (text[start : start + size] for start in range(0, len(text), size))


def streamed(text: str, *, render: bool, size: int = 3) -> tuple[io.StringIO, LiveText]:
    stream = io.StringIO()
    live = LiveText(stream, render=render)
    for piece in pieces(text, size):
        live.add(piece)
    return stream, live


def test_plain_text_arrives_as_the_whole_narration_would_be_printed() -> None:
    stream, live = streamed("  Let me check\nthe fleet.\n\n", render=False)
    assert live.finish("  Let me check\nthe fleet.\n\n")
    assert stream.getvalue() == "\nLet me check\nthe fleet.\n"


def test_the_rendered_stream_ends_as_the_rendering_of_the_whole_answer() -> None:
    stream, live = streamed(ANSWER, render=True)
    live.finish(ANSWER)
    assert screen(stream.getvalue()) == ["", *rendered(ANSWER)]


def test_the_block_being_written_shows_as_plain_text_until_the_next_begins() -> None:
    stream, live = streamed("The cache is **untouched**", render=True)
    assert screen(stream.getvalue()) == ["", "The cache is **untouched**"]
    live.add("\n\nNe")
    assert screen(stream.getvalue()) == ["", "The cache is untouched", "", "Ne"]


def test_a_heading_is_rendered_as_soon_as_the_next_block_begins() -> None:
    stream, _ = streamed("# Report\n\nT", render=True)
    assert screen(stream.getvalue()) == ["", *rendered("# Report"), "", "T"]


def test_a_line_that_may_still_change_what_the_block_is_keeps_it_in_progress() -> None:
    # "#" alone would be a heading ending the paragraph; "#tag" continues it.
    stream, live = streamed("**bold**\n#", render=True)
    assert screen(stream.getvalue()) == ["", "**bold**", "#"]
    live.add("tag")
    live.finish("**bold**\n#tag")
    assert screen(stream.getvalue()) == ["", "bold #tag"]


def test_a_block_taller_than_the_screen_stays_as_written_and_is_shown_once() -> None:
    lines = [f"line **{number}**" for number in range(30)]
    text = "\n".join(lines)
    stream, live = streamed(text, render=True, size=7)
    live.finish(text)
    assert screen(stream.getvalue()) == ["", *lines]


def test_wrapped_plain_text_is_erased_whole_when_its_rendering_replaces_it() -> None:
    long_paragraph = "word **bold** " * 20
    text = long_paragraph + "\n\nafter"
    stream, live = streamed(text, render=True)
    live.finish(text)
    assert screen(stream.getvalue()) == ["", *rendered(text)]


def test_a_voided_call_ends_its_line_and_the_next_attempt_starts_afresh() -> None:
    stream, live = streamed("The ca", render=True)
    assert live.void()
    live.add("The cache.")
    live.finish("The cache.")
    assert screen(stream.getvalue()) == ["", "The ca", "", "The cache."]


def test_text_that_the_pieces_did_not_begin_is_not_claimed_as_shown() -> None:
    _, live = streamed("Something else", render=False)
    assert not live.finish("The answer")


def surface_output(*events: object, thinking: bool = False) -> tuple[str, StreamingLineSurface]:
    stderr = io.StringIO()
    surface = StreamingLineSurface(stderr, render=False, thinking=thinking)
    for event in events:
        if isinstance(event, TextDeltaEvent | ThinkingDeltaEvent):
            surface.emit_delta(event)
        else:
            surface.emit(event)  # type: ignore[arg-type]
    surface.close()
    return stderr.getvalue(), surface


def test_streamed_narration_is_written_once() -> None:
    output, surface = surface_output(
        TextDeltaEvent("Let me "),
        TextDeltaEvent("check."),
        TextEvent("Let me check."),
        ToolCallEvent("t1", "say", {"message": "moo"}, ("say", "--", "moo")),
    )
    assert output == "\nLet me check.\n-> say -- moo\n"
    assert surface.shown_answer is None


def test_a_streamed_answer_is_kept_for_stdout_and_marked_as_shown() -> None:
    output, surface = surface_output(
        TextDeltaEvent("There you "), TextDeltaEvent("go!"), TextEvent("There you go!", final=True)
    )
    assert output == "\nThere you go!\n"
    assert surface.answer == surface.shown_answer == "There you go!"


def test_an_answer_that_arrived_whole_is_left_to_stdout() -> None:
    output, surface = surface_output(TextEvent("There you go!", final=True))
    assert output == ""
    assert surface.answer == "There you go!"
    assert surface.shown_answer is None


def test_a_retry_after_text_was_shown_says_the_text_starts_over() -> None:
    output, _ = surface_output(
        TextDeltaEvent("The ca"),
        StatusEvent(phase=StatusPhase.RETRYING, attempt=2, attempts=3, wait_seconds=0.5),
    )
    assert output == f"\nThe ca\nmodel busy: retrying in 1s (attempt 2 of 3); {RESTART_NOTE}\n"


def test_a_retry_before_any_text_says_only_that_the_model_is_busy() -> None:
    output, _ = surface_output(
        StatusEvent(phase=StatusPhase.RETRYING, attempt=2, attempts=3, wait_seconds=0.5)
    )
    assert output == "model busy: retrying in 1s (attempt 2 of 3)\n"


def test_streamed_reasoning_is_shown_line_by_line_and_not_again_whole() -> None:
    output, _ = surface_output(
        ThinkingDeltaEvent("first thought\nsec"),
        ThinkingDeltaEvent("ond thought"),
        TextDeltaEvent("Done."),
        ThinkingEvent("first thought\nsecond thought"),
        TextEvent("Done.", final=True),
        thinking=True,
    )
    assert output == (
        "\N{THOUGHT BALLOON} first thought\n\nDone.\n\N{THOUGHT BALLOON} second thought\n"
    )
