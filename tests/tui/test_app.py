from __future__ import annotations

from pathlib import Path

from textual.widgets import Button

from fisk_ai.screens.approval import ApprovalScreen
from fisk_ai.screens.run import CONTINUE_HERE
from fisk_ai.tui.status import RunState
from fisk_ai.tui.transcript import BlockKind
from tests.fakes.provider import answer, call, calls
from tests.tui.workstation import running
from tests.tui.workstation_driver import remove_stream, screen_text, send, settle, until_question


async def test_a_prompt_shows_its_answer_and_opens_the_chat_bar(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("the streams are fine")]) as (app, pilot):
        await settle(app, pilot)
        text = screen_text(app)
        assert "> hello" in text
        assert "the streams are fine" in text
        assert app.run_screen.run_state is RunState.AWAITING_INPUT
        assert app.run_screen.chat.has_focus


async def test_a_follow_up_continues_the_conversation(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first"), answer("second")]) as (app, pilot):
        await settle(app, pilot)
        session = app.bridge.session_id
        await send(app, pilot, "and then?")
        await settle(app, pilot)
        assert "> and then?" in screen_text(app)
        assert "second" in screen_text(app)
        assert app.bridge.session_id == session


async def test_a_gated_command_raises_the_approval_modal_with_no_focused(tmp_path: Path) -> None:
    async with running(tmp_path, remove_stream()) as (app, pilot):
        await until_question(app, pilot)
        assert isinstance(app.screen, ApprovalScreen)
        assert isinstance(app.focused, Button)
        assert str(app.focused.label) == "No 1/n"
        assert app.run_screen.run_state is RunState.BLOCKED
        assert "[blocked]" in str(app.run_screen.query_one("#status").render())
        await pilot.press("right", "enter")  # Once
        await settle(app, pilot)
        text = screen_text(app)
        assert "-> stream rm -- ORDERS" in text
        assert "removed" in text
        assert app.run_screen.last_result is not None
        assert app.run_screen.last_result.tool_calls == 1


async def test_no_declines_the_gated_command(tmp_path: Path) -> None:
    async with running(tmp_path, remove_stream()) as (app, pilot):
        await until_question(app, pilot)
        await pilot.press("enter")  # No has the focus
        await settle(app, pilot)
        app.run_screen.view.action_toggle_output()
        await pilot.pause()
        assert "declined" in screen_text(app).lower()
        assert '"argv"' not in screen_text(app)


async def test_always_stops_asking_for_the_command(tmp_path: Path) -> None:
    replies = [
        *remove_stream(),
        calls(call("t2", "stream_rm", {"stream": "EVENTS"})),
        answer("removed again"),
    ]
    async with running(tmp_path, replies) as (app, pilot):
        await until_question(app, pilot)
        await pilot.press("right", "right", "enter")  # Always
        await settle(app, pilot)
        await send(app, pilot, "the other one too")
        await settle(app, pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        assert "removed again" in screen_text(app)
        result = app.run_screen.last_result
        assert result is not None and result.tool_calls == 2


async def test_ctrl_l_empties_the_screen_and_keeps_the_conversation(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first"), answer("second")]) as (app, pilot):
        await settle(app, pilot)
        session = app.bridge.session_id
        await pilot.press("ctrl+l")
        assert "first" not in screen_text(app)
        await send(app, pilot, "more")
        await settle(app, pilot)
        assert app.bridge.session_id == session
        assert "second" in screen_text(app)


async def test_clear_starts_a_new_conversation_and_keeps_the_scrollback(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first"), answer("fresh")]) as (app, pilot):
        await settle(app, pilot)
        old_session = app.bridge.session_id
        await send(app, pilot, "/clear")
        await pilot.pause()
        assert "--- context cleared ---" in screen_text(app)
        await send(app, pilot, "start over")
        await settle(app, pilot)
        text = screen_text(app)
        assert "first" in text and "fresh" in text
        assert app.bridge.session_id not in ("", old_session)
        assert app.outcome.abandoned == (old_session,)


async def test_a_double_slash_sends_a_leading_slash(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first"), answer("ok")]) as (app, pilot):
        await settle(app, pilot)
        await send(app, pilot, "//etc/hosts please")
        await settle(app, pilot)
        assert "> /etc/hosts please" in screen_text(app)


async def test_up_recalls_the_previous_prompt(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("first"), answer("second")]) as (app, pilot):
        await settle(app, pilot)
        await send(app, pilot, "again")
        await settle(app, pilot)
        await pilot.press("up")
        assert app.run_screen.chat.value == "again"
        await pilot.press("up")
        assert app.run_screen.chat.value == "hello"


async def test_ctrl_d_leaves_with_the_conversation_kept(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("done")]) as (app, pilot):
        await settle(app, pilot)
        await pilot.press("ctrl+d")
        await pilot.pause()
    assert not app.is_running
    outcome = app.outcome
    assert outcome.answer == "done"
    assert outcome.session_id
    assert outcome.state is RunState.COMPLETE
    assert any((tmp_path / "runs").rglob(f"*{outcome.session_id}*"))


async def test_ctrl_c_with_a_question_up_stops_the_run_without_answering(tmp_path: Path) -> None:
    async with running(tmp_path, remove_stream()) as (app, pilot):
        await until_question(app, pilot)
        await pilot.press("ctrl+c")
        await settle(app, pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        assert app.run_screen.run_state is RunState.SUSPENDED
        assert CONTINUE_HERE in screen_text(app)
        assert app.is_running


async def test_markup_in_tool_output_is_shown_as_typed(tmp_path: Path) -> None:
    replies = [calls(call("t1", "say", {"words": "[/]x[0]"})), answer("[/] and [bold]y")]
    async with running(tmp_path, replies) as (app, pilot):
        await settle(app, pilot)
        assert "[/] and [bold]y" in screen_text(app)
        assert app.run_screen.view.search("[/]x[0]") > 0
        await pilot.pause()
        assert "[/]x[0]" in screen_text(app)


async def test_markup_in_an_approval_is_shown_as_typed(tmp_path: Path) -> None:
    replies = [calls(call("t1", "stream_rm", {"stream": "[/]x[0]"})), answer("ok")]
    async with running(tmp_path, replies) as (app, pilot):
        await until_question(app, pilot)
        command = app.screen.query_one("#approval-command")
        assert "[/]x[0]" in str(command.render())
        await pilot.press("enter")
        await settle(app, pilot)


async def test_help_lists_the_keys(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("done")]) as (app, pilot):
        await settle(app, pilot)
        await send(app, pilot, "/help")
        await pilot.pause()
        text = str(app.screen.query_one("#help-text").render())
        for key in ("Ctrl-C", "Ctrl-D", "Ctrl-L", "F2", "/clear", "//text"):
            assert key in text


async def test_tool_output_starts_expanded_with_the_flag(tmp_path: Path) -> None:
    replies = [calls(call("t1", "say", {"words": "moo"})), answer("done")]
    async with running(tmp_path, replies, tool_output=True) as (app, pilot):
        await settle(app, pilot)
        transcript = app.run_screen.view.transcript
        outputs = [
            index
            for index, block in enumerate(transcript.blocks)
            if block.kind is BlockKind.TOOL_OUTPUT
        ]
        assert outputs
        assert not any(transcript.is_folded(index) for index in outputs)
        assert "lines of output" not in screen_text(app)


async def test_tool_output_is_folded_by_default(tmp_path: Path) -> None:
    replies = [calls(call("t1", "say", {"words": "moo"})), answer("done")]
    async with running(tmp_path, replies) as (app, pilot):
        await settle(app, pilot)
        assert "more line (ctrl-o to expand)" in screen_text(app)
