"""The tool and chat span attributes Go fisk-ai sets beyond the basic ones: how a call was gated,
rewritten, resumed and ended, what command status it ran to, and which conversation, reply and
model a chat span belongs to, read off the OTLP receiver after a real turn."""

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.agent.hooks import Deny, Hooks, PreToolDecision, Rewrite
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.llm.types import ToolUseBlock
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.telemetry import TelemetrySettings, start
from fisk_ai.tools.base import ExecDeps, Outcome, Tool
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.questions import ApprovalChoice
from tests.agent.conftest import SETTINGS, FakeTool, ops_model, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.fiskapp import write_fake_app
from tests.fakes.prompter import ScriptedPrompter
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.telemetry.receiver import Receiver, attributes


@pytest.fixture
def app_tools(tmp_path: Path) -> tuple[Tool, ...]:
    """The commands of a fake application: ``status`` free, ``stream_rm`` gated by ai:confirm."""
    path = write_fake_app(tmp_path, ops_model(), name="ops")
    return tuple(load_application(ApplicationModel.model_validate(ops_model()), str(path)).tools)


async def run_turn(
    receiver: Receiver,
    tmp_path: Path,
    tools: tuple[Tool, ...],
    *replies: Any,
    prompter: ScriptedPrompter | None = None,
    hooks: Hooks | None = None,
    capture: bool = False,
) -> str:
    """One exported turn; returns its session id."""
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint, capture=capture))
    resources = Resources(
        SETTINGS,
        ScriptedProvider(list(replies), provider="anthropic"),
        toolset(*tools),
        FileSessionStore(tmp_path / "runs"),
        hooks=hooks,
        telemetry=telemetry,
    )
    async with Runner(resources, events=RecordingSink(), prompter=prompter) as runner:
        result = await runner.start("go")
    telemetry.shutdown()
    return result.session_id


def tool_span(receiver: Receiver) -> dict[str, Any]:
    (span,) = [span for span in receiver.spans() if span.name.startswith("execute_tool")]
    return attributes(span)


def chat_spans(receiver: Receiver) -> list[dict[str, Any]]:
    chats = [span for span in receiver.spans() if span.name.startswith("chat ")]
    chats.sort(key=lambda span: span.start_time_unix_nano)
    return [attributes(span) for span in chats]


def outcome_label(receiver: Receiver) -> str:
    (point,) = receiver.metric_points("gen_ai.execute_tool.duration")
    label: str = attributes(point)["fisk.tool.outcome"]
    return label


async def test_a_command_reports_its_exit_status(
    receiver: Receiver, tmp_path: Path, app_tools: tuple[Tool, ...]
) -> None:
    await run_turn(receiver, tmp_path, app_tools, calls(call("t1", "status")), answer("done"))

    assert tool_span(receiver)["fisk.tool.exit_code"] == 0


async def test_a_tool_that_runs_no_command_reports_no_exit_status(
    receiver: Receiver, tmp_path: Path
) -> None:
    await run_turn(
        receiver, tmp_path, (FakeTool("work"),), calls(call("t1", "work")), answer("done")
    )

    assert "fisk.tool.exit_code" not in tool_span(receiver)


async def test_an_ungated_call_says_it_was_not_gated_rewritten_or_resumed(
    receiver: Receiver, tmp_path: Path
) -> None:
    await run_turn(
        receiver, tmp_path, (FakeTool("work"),), calls(call("t1", "work")), answer("done")
    )

    tool = tool_span(receiver)
    assert (tool["fisk.tool.confirm_gated"], tool["fisk.tool.rewritten"]) == (False, False)
    assert tool["fisk.tool.resumed"] is False
    assert "fisk.tool.confirm_wait_ms" not in tool


async def test_an_approved_call_says_it_was_gated_and_how_long_it_waited(
    receiver: Receiver, tmp_path: Path, app_tools: tuple[Tool, ...]
) -> None:
    await run_turn(
        receiver,
        tmp_path,
        app_tools,
        calls(call("t1", "stream_rm", {"stream": "X"})),
        answer("done"),
        prompter=ScriptedPrompter([ApprovalChoice.ONCE]),
    )

    tool = tool_span(receiver)
    assert tool["fisk.tool.confirm_gated"] is True
    assert tool["fisk.tool.confirm_wait_ms"] >= 0
    assert tool["fisk.tool.outcome"] == "executed"


async def test_a_call_the_operator_declines_is_confirm_denied(
    receiver: Receiver, tmp_path: Path, app_tools: tuple[Tool, ...]
) -> None:
    await run_turn(
        receiver,
        tmp_path,
        app_tools,
        calls(call("t1", "stream_rm", {"stream": "X"})),
        answer("done"),
        prompter=ScriptedPrompter([ApprovalChoice.NO]),
    )

    assert tool_span(receiver)["fisk.tool.outcome"] == "confirm_denied"
    assert outcome_label(receiver) == "confirm_denied"


async def test_a_call_a_hook_denies_is_policy_denied(receiver: Receiver, tmp_path: Path) -> None:
    async def refuse(call: ToolUseBlock) -> PreToolDecision:
        return Deny("not in production")

    await run_turn(
        receiver,
        tmp_path,
        (FakeTool("work"),),
        calls(call("t1", "work")),
        answer("done"),
        hooks=Hooks(pre_tool_use=(refuse,)),
    )

    assert tool_span(receiver)["fisk.tool.outcome"] == "policy_denied"
    assert outcome_label(receiver) == "policy_denied"


async def test_a_call_whose_arguments_fail_validation_is_missing_arguments(
    receiver: Receiver, tmp_path: Path, app_tools: tuple[Tool, ...]
) -> None:
    await run_turn(
        receiver,
        tmp_path,
        app_tools,
        calls(call("t1", "stream_rm", {"force": True})),
        answer("done"),
    )

    assert tool_span(receiver)["fisk.tool.outcome"] == "missing_arguments"
    assert outcome_label(receiver) == "missing_arguments"


async def test_a_call_a_hook_rewrote_says_so_and_reports_the_tool_that_ran(
    receiver: Receiver, tmp_path: Path
) -> None:
    async def redirect(call: ToolUseBlock) -> PreToolDecision:
        return Rewrite("other", "{}")

    await run_turn(
        receiver,
        tmp_path,
        (FakeTool("work"), FakeTool("other")),
        calls(call("t1", "work")),
        answer("done"),
        hooks=Hooks(pre_tool_use=(redirect,)),
    )

    (span,) = [span for span in receiver.spans() if span.name.startswith("execute_tool")]
    tool = attributes(span)
    assert (span.name, tool["gen_ai.tool.name"]) == ("execute_tool work", "other")
    assert tool["fisk.tool.rewritten"] is True
    (point,) = receiver.metric_points("gen_ai.execute_tool.duration")
    assert attributes(point)["gen_ai.tool.name"] == "other"


async def test_a_call_a_resume_finishes_is_marked_resumed(
    receiver: Receiver, tmp_path: Path
) -> None:
    suspend = asyncio.Event()

    async def first(arguments: str, deps: ExecDeps) -> Outcome:
        suspend.set()
        return Outcome("first done")

    tools = toolset(FakeTool("first", first), FakeTool("second"))
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint, no_metrics=True))
    store = FileSessionStore(tmp_path / "runs")
    batch = ScriptedProvider([calls(call("t1", "first"), call("t2", "second"))])
    async with Runner(
        Resources(SETTINGS, batch, tools, store, telemetry=telemetry),
        events=RecordingSink(),
        suspend=suspend,
    ) as runner:
        suspended = await runner.start("go")
    finish = ScriptedProvider([answer("done")])
    async with Runner(
        Resources(SETTINGS, finish, tools, store, telemetry=telemetry), events=RecordingSink()
    ) as resumed:
        await resumed.resume(suspended.session_id)
    telemetry.shutdown()

    spans = [span for span in receiver.spans() if span.name.startswith("execute_tool")]
    resumed_by_call = {
        attributes(span)["gen_ai.tool.call.id"]: attributes(span)["fisk.tool.resumed"]
        for span in spans
    }
    assert resumed_by_call == {"t1": False, "t2": True}


async def test_each_model_call_names_its_conversation(receiver: Receiver, tmp_path: Path) -> None:
    session_id = await run_turn(
        receiver, tmp_path, (FakeTool("work"),), calls(call("t1", "work")), answer("done")
    )

    chats = chat_spans(receiver)
    assert [chat["gen_ai.conversation.id"] for chat in chats] == [session_id, session_id]


async def test_a_model_call_carries_the_reply_id_and_the_model_that_answered(
    receiver: Receiver, tmp_path: Path
) -> None:
    reply = replace(answer("done"), response_id="msg_01", response_model="claude-x-20261101")
    await run_turn(receiver, tmp_path, (), reply)

    (chat,) = chat_spans(receiver)
    assert chat["gen_ai.response.id"] == "msg_01"
    assert chat["gen_ai.response.model"] == "claude-x-20261101"
    assert chat["gen_ai.request.model"] == "test-model"


async def test_a_reply_without_an_id_leaves_the_response_attributes_off(
    receiver: Receiver, tmp_path: Path
) -> None:
    await run_turn(receiver, tmp_path, (), answer("done"))

    (chat,) = chat_spans(receiver)
    assert "gen_ai.response.id" not in chat
    assert "gen_ai.response.model" not in chat


async def test_captured_input_says_where_in_the_conversation_it_begins(
    receiver: Receiver, tmp_path: Path
) -> None:
    await run_turn(
        receiver,
        tmp_path,
        (FakeTool("work"),),
        calls(call("t1", "work")),
        answer("done"),
        capture=True,
    )

    # The second call sends the prompt, the reply asking for the tool and its result; only the
    # result is new, so its capture begins at message 2.
    assert [chat["fisk.content.from_index"] for chat in chat_spans(receiver)] == [0, 2]


async def test_without_capture_no_index_is_sent(receiver: Receiver, tmp_path: Path) -> None:
    await run_turn(receiver, tmp_path, (), answer("done"))

    (chat,) = chat_spans(receiver)
    assert "fisk.content.from_index" not in chat
