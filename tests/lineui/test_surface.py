import io

from fisk_ai.agent.events import TextEvent, ThinkingEvent, ToolCallEvent, ToolResultEvent
from fisk_ai.lineui.surface import LineSurface, write_answer
from fisk_ai.tools.base import ExecRecord


def run_events(**options: bool) -> tuple[str, LineSurface]:
    stderr = io.StringIO()
    surface = LineSurface(stderr, **options)
    for event in (
        ThinkingEvent("pondering cows"),
        TextEvent("Let me check."),
        ToolCallEvent("t1", "say", {"message": "moo"}, ("say", "--", "moo")),
        ToolResultEvent("t1", " ____\n< moo >\n", exec=ExecRecord("say -- moo", 0)),
        ToolCallEvent("t2", "ask_human_confirm", {"question": "ok?"}),
        ToolResultEvent("t2", '{"confirmed":true}'),
        TextEvent("There you go!", final=True),
    ):
        surface.emit(event)
    return stderr.getvalue(), surface


def test_the_answer_is_kept_for_stdout_and_never_written_to_stderr() -> None:
    stderr, surface = run_events()
    assert surface.answer == "There you go!"
    assert "There you go!" not in stderr


def test_calls_and_narration_go_to_stderr_without_output_by_default() -> None:
    stderr, _ = run_events()
    assert stderr == "\nLet me check.\n-> say -- moo\n"


def test_tool_output_and_thinking_when_asked() -> None:
    stderr, _ = run_events(tool_output=True, thinking=True)
    assert "\N{THOUGHT BALLOON} pondering cows" in stderr
    assert "-> say -- moo\n<-\n ____\n< moo >\n" in stderr
    assert "confirmed" not in stderr


def test_verbose_shows_the_human_in_the_loop_calls() -> None:
    stderr, _ = run_events(verbose=True)
    assert '-> ask_human_confirm {"question":"ok?"}' in stderr


def test_a_piped_answer_is_raw_markdown() -> None:
    stdout = io.StringIO()
    write_answer("# Title\n\n**bold**", stdout, render=False)
    assert stdout.getvalue() == "# Title\n\n**bold**\n"


def test_a_retried_model_call_is_said_with_its_wait_and_attempt() -> None:
    from fisk_ai.agent.events import StatusEvent, StatusPhase

    stderr = io.StringIO()
    surface = LineSurface(stderr)
    surface.emit(StatusEvent(phase=StatusPhase.RETRYING, attempt=2, attempts=3, wait_seconds=1.2))
    surface.emit(StatusEvent(phase=StatusPhase.WORKING))
    assert stderr.getvalue() == "model busy: retrying in 2s (attempt 2 of 3)\n"
