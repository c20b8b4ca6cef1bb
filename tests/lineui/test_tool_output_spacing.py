import io

from fisk_ai.agent.events import ToolCallEvent, ToolResultEvent
from fisk_ai.lineui.surface import LineSurface
from fisk_ai.tools.base import ExecRecord


def shown_with_tool_output(*results: ToolResultEvent) -> str:
    stderr = io.StringIO()
    surface = LineSurface(stderr, tool_output=True)
    for result in results:
        surface.emit(ToolCallEvent(result.call_id, "say", {}, ("say", "--", "moo")))
        surface.emit(result)
    return stderr.getvalue()


def test_a_blank_line_separates_a_tools_output_from_the_next_call() -> None:
    shown = shown_with_tool_output(
        ToolResultEvent("t1", "< moo >\n", exec=ExecRecord("say -- moo", 0)),
        ToolResultEvent("t2", "< moo >\n", exec=ExecRecord("say -- moo", 0)),
    )
    assert "<-\n< moo >\n\n-> say -- moo\n" in shown


def test_output_without_a_final_newline_is_followed_by_a_blank_line_too() -> None:
    shown = shown_with_tool_output(
        ToolResultEvent("t1", "", exec=ExecRecord("say -- moo", 0)),
        ToolResultEvent("t2", "unknown tool", is_error=True),
    )
    assert shown.endswith("<-\n(no output)\n\n-> say -- moo\n<-\n(error) unknown tool\n\n")
