"""What a turn and its tool calls report: the root span's ending and counts, the tool's kind
and outcome on spans and metrics, and the startup span, read off the OTLP receiver."""

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.config import Config
from fisk_ai.serve.observability import start_hosted_telemetry
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.telemetry import Telemetry, TelemetrySettings, start
from fisk_ai.tools.base import Kind
from tests.agent.conftest import SETTINGS, FakeTool, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.telemetry.receiver import Receiver, attributes


async def run_turn(telemetry: Telemetry, tmp_path: Path, *replies: Any) -> None:
    resources = Resources(
        SETTINGS,
        ScriptedProvider(list(replies), provider="anthropic"),
        toolset(FakeTool("status", kind=Kind.APPLICATION)),
        FileSessionStore(tmp_path / "runs"),
        telemetry=telemetry,
    )
    async with Runner(resources, events=RecordingSink()) as runner:
        await runner.start("status please")


async def test_tool_metrics_carry_the_tools_kind_and_outcome(
    receiver: Receiver, tmp_path: Path
) -> None:
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint))
    await run_turn(telemetry, tmp_path, calls(call("t1", "status")), answer("done"))
    telemetry.shutdown()

    (point,) = receiver.metric_points("gen_ai.execute_tool.duration")
    assert attributes(point) == {
        "fisk.tool.kind": "application",
        "fisk.tool.outcome": "executed",
        "gen_ai.tool.name": "status",
    }
    (counted,) = receiver.metric_points("fisk.tool.calls")
    assert attributes(counted)["fisk.tool.kind"] == "application"


async def test_an_unknown_tool_is_counted_under_its_own_kind_without_its_name(
    receiver: Receiver, tmp_path: Path
) -> None:
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint))
    await run_turn(telemetry, tmp_path, calls(call("t1", "nosuch")), answer("done"))
    telemetry.shutdown()

    (span,) = [span for span in receiver.spans() if span.name.startswith("execute_tool")]
    assert span.name == "execute_tool unknown_tool"
    tool = attributes(span)
    assert tool["fisk.tool.requested_name"] == "nosuch"
    assert tool["fisk.tool.outcome"] == "unknown_tool"
    assert "gen_ai.tool.name" not in tool
    (point,) = receiver.metric_points("gen_ai.execute_tool.duration")
    labels = attributes(point)
    assert (labels["fisk.tool.kind"], labels["fisk.tool.outcome"]) == ("unknown", "unknown_tool")
    assert "nosuch" not in labels.values()


async def test_a_turn_says_how_it_ended_and_what_it_ran(receiver: Receiver, tmp_path: Path) -> None:
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint))
    await run_turn(telemetry, tmp_path, calls(call("t1", "status")), answer("done"))
    telemetry.shutdown()

    (root,) = [span for span in receiver.spans() if span.name.startswith("invoke_agent")]
    run = attributes(root)
    assert run["fisk.run.terminal_reason"] == "completed"
    assert (run["fisk.run.crashed"], run["fisk.run.interactive"]) == (False, False)
    assert (run["fisk.run.tool_calls"], run["fisk.run.remote_tool_calls"]) == (1, 0)
    (inference,) = receiver.metric_points("gen_ai.invoke_agent.inference_calls")
    assert inference.sum == 2
    assert attributes(inference)["fisk.run.terminal_reason"] == "completed"
    (tools,) = receiver.metric_points("gen_ai.invoke_agent.tool_calls")
    assert tools.sum == 1


def test_a_turn_that_raises_is_an_error_and_a_crash(receiver: Receiver) -> None:
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint, no_metrics=True))
    try:
        with telemetry.run("ops"):
            raise RuntimeError("the loop broke")
    except RuntimeError:
        pass
    telemetry.shutdown()

    (root,) = receiver.spans()
    assert attributes(root)["fisk.run.terminal_reason"] == "error"
    assert attributes(root)["fisk.run.crashed"] is True


def test_the_startup_span_runs_from_process_start_to_ready(receiver: Receiver) -> None:
    config = Config.model_validate(
        {"identity": "ops", "telemetry": {"enabled": True, "endpoint": receiver.endpoint}}
    )
    before = time.time_ns()
    telemetry = start_hosted_telemetry(config, no_telemetry=False, note=lambda _: None)
    telemetry.ready(tools_by_kind={"application": 3, "builtin": 2})
    after = time.time_ns()
    telemetry.shutdown()

    (startup,) = receiver.spans()
    assert startup.name == "startup ops"
    assert startup.start_time_unix_nano < before <= startup.end_time_unix_nano <= after
    assert attributes(startup)["fisk.tools.application"] == 3
    assert startup.parent_span_id == b""


async def test_a_turn_of_a_stored_conversation_says_it_was_resumed(
    receiver: Receiver, tmp_path: Path
) -> None:
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint, no_metrics=True))
    resources = Resources(
        replace(SETTINGS, interactive=True),
        ScriptedProvider([answer("first"), answer("second")], provider="anthropic"),
        toolset(),
        FileSessionStore(tmp_path / "runs"),
        telemetry=telemetry,
    )
    async with Runner(resources, events=RecordingSink()) as first:
        started = await first.start("hello")
    async with Runner(resources, events=RecordingSink()) as second:
        await second.follow_up_stored(started.session_id, "and again")
    telemetry.shutdown()

    roots = [span for span in receiver.spans() if span.name.startswith("invoke_agent")]
    roots.sort(key=lambda span: span.start_time_unix_nano)
    assert [attributes(root)["fisk.run.resumed"] for root in roots] == [False, True]


def test_a_process_that_stops_before_it_is_ready_says_startup_failed(receiver: Receiver) -> None:
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint, no_metrics=True))
    telemetry.startup("ops")
    telemetry.shutdown()

    (startup,) = receiver.spans()
    assert attributes(startup)["error.type"] == "setup_failed"
