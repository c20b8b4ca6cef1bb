"""A mixed fleet reads on one dashboard: the metric names, metric labels, bucket bounds and span
attributes a dashboard built on Go fisk-ai agents reads are all in what this build exports.

The Go names are written down here from the Go fisk-ai's telemetry documentation (its Metrics
and Attributes tables) and its advised bucket layouts; the run is a real agent turn exported to
the OTLP receiver, and the served call a real a2a tool call (docs/compatibility.md, Telemetry)."""

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.a2a.client import call_tool
from fisk_ai.a2a.in_process import InProcessBroker
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.llm.types import Message, Response, Role, Usage
from fisk_ai.serve.tools import ToolsOptions, ToolsServer
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.telemetry import TelemetrySettings, start
from fisk_ai.tools.base import ExecDeps, ExecRecord, Kind, Outcome
from tests.agent.conftest import SETTINGS, FakeTool, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call
from tests.patience import DEADLINE_DELTA
from tests.telemetry.receiver import Receiver, attributes

TURN_LABELS = {"gen_ai.agent.name", "fisk.run.terminal_reason", "fisk.run.interactive"}
MODEL_LABELS = {"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model"}
GO_METRIC_LABELS = {
    "gen_ai.client.token.usage": MODEL_LABELS | {"gen_ai.token.type"},
    "gen_ai.client.operation.duration": MODEL_LABELS,
    "gen_ai.invoke_agent.duration": TURN_LABELS,
    "gen_ai.invoke_agent.inference_calls": TURN_LABELS,
    "gen_ai.invoke_agent.tool_calls": TURN_LABELS,
    "gen_ai.execute_tool.duration": {"gen_ai.tool.name", "fisk.tool.kind", "fisk.tool.outcome"},
    "fisk.session.append.duration": {"fisk.session.backend"},
}

SECONDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
GO_BUCKETS = {
    "gen_ai.client.operation.duration": SECONDS,
    "gen_ai.execute_tool.duration": SECONDS,
    "gen_ai.invoke_agent.duration": [
        *(0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4, 204.8, 409.6)
    ],
    "gen_ai.client.token.usage": [float(4**power) for power in range(14)],
    "gen_ai.invoke_agent.inference_calls": [1, 2, 4, 8, 16, 32, 64, 128],
    "gen_ai.invoke_agent.tool_calls": [1, 2, 4, 8, 16, 32, 64, 128],
    "fisk.session.append.duration": [
        *(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
    ],
}

USAGE = {
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.reasoning.output_tokens",
    "fisk.llm.uncached_input_tokens",
}
GO_ROOT_ATTRIBUTES = USAGE | {
    "gen_ai.operation.name",
    "gen_ai.agent.name",
    "fisk.run.terminal_reason",
    "fisk.run.resumed",
    "fisk.run.crashed",
    "fisk.run.interactive",
    "fisk.run.tool_calls",
    "fisk.run.remote_tool_calls",
}
GO_CHAT_ATTRIBUTES = (USAGE - {"fisk.llm.uncached_input_tokens"}) | MODEL_LABELS
GO_CHAT_ATTRIBUTES |= {
    "gen_ai.response.finish_reasons",
    "gen_ai.conversation.id",
    "fisk.llm.iteration",
    "fisk.llm.messages",
    "fisk.llm.tools",
}
GO_TOOL_ATTRIBUTES = {
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.type",
    "gen_ai.agent.name",
    "fisk.tool.kind",
    "fisk.tool.outcome",
    "fisk.tool.arg_keys",
    "fisk.tool.remote",
    "fisk.tool.confirm_gated",
    "fisk.tool.rewritten",
    "fisk.tool.resumed",
}
# fisk.served.caller is left off, as Go leaves it off, when the transport vouches for nobody.
GO_SERVED_TOOL_ATTRIBUTES = {
    "gen_ai.operation.name",
    "gen_ai.tool.type",
    "gen_ai.tool.name",
    "gen_ai.agent.name",
    "fisk.served.request",
    "fisk.served.caller_verified",
    "fisk.served.sender",
    "fisk.tool.outcome",
    "fisk.tool.exit_code",
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Receiver]:
    """One agent turn, a tool call and two model calls, exported with metrics."""
    import asyncio

    receiver = Receiver()
    receiver.start()
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint))
    reply = Message(Role.ASSISTANT, (call("t1", "status", {"stream": "ORDERS"}),))
    cached = Usage(input_tokens=40, output_tokens=12, cache_read_tokens=900, cache_create_tokens=60)
    resources = Resources(
        replace(SETTINGS, identity="ops"),
        ScriptedProvider(
            [
                Response(
                    reply,
                    "tool_use",
                    cached,
                    response_id="msg_01",
                    response_model="claude-opus-4-8-20261101",
                ),
                answer("done"),
            ],
            provider="anthropic",
        ),
        toolset(FakeTool("status", kind=Kind.APPLICATION)),
        FileSessionStore(Path(tmp_path_factory.mktemp("runs"))),
        telemetry=telemetry,
    )

    async def turn() -> None:
        async with Runner(resources, events=RecordingSink()) as runner:
            await runner.start("status please")

    asyncio.run(turn())
    telemetry.shutdown()
    yield receiver
    receiver.stop()


def metric(receiver: Receiver, name: str) -> Any:
    (found,) = [
        metric
        for request in receiver.metrics
        for resource in request.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
    ]
    return found


@pytest.mark.parametrize("name", sorted(GO_METRIC_LABELS))
def test_every_metric_a_go_dashboard_reads_is_exported_with_its_labels(
    exported: Receiver, name: str
) -> None:
    points = exported.metric_points(name)
    assert points, f"{name} was not exported"
    labels = set().union(*(attributes(point) for point in points))
    assert GO_METRIC_LABELS[name] <= labels


@pytest.mark.parametrize("name", sorted(GO_BUCKETS))
def test_every_histogram_has_the_go_bucket_bounds(exported: Receiver, name: str) -> None:
    for point in metric(exported, name).histogram.data_points:
        assert list(point.explicit_bounds) == pytest.approx(GO_BUCKETS[name])


def spans_named(receiver: Receiver, prefix: str) -> list[Any]:
    return [span for span in receiver.spans() if span.name.startswith(prefix)]


def test_the_root_span_carries_the_go_run_attributes(exported: Receiver) -> None:
    (root,) = spans_named(exported, "invoke_agent ops")
    assert set(attributes(root)) >= GO_ROOT_ATTRIBUTES


def test_each_model_call_carries_the_go_chat_attributes(exported: Receiver) -> None:
    chats = spans_named(exported, "chat ")
    assert len(chats) == 2
    for chat in chats:
        assert set(attributes(chat)) >= GO_CHAT_ATTRIBUTES


def test_a_model_call_names_the_reply_and_the_model_that_answered(exported: Receiver) -> None:
    first = min(spans_named(exported, "chat "), key=lambda span: span.start_time_unix_nano)
    assert attributes(first)["gen_ai.response.id"] == "msg_01"
    assert attributes(first)["gen_ai.response.model"] == "claude-opus-4-8-20261101"


def test_the_tool_span_carries_the_go_tool_attributes(exported: Receiver) -> None:
    (tool,) = spans_named(exported, "execute_tool ")
    assert tool.name == "execute_tool status"
    assert set(attributes(tool)) >= GO_TOOL_ATTRIBUTES
    assert attributes(tool)["fisk.tool.arg_keys"] == ("stream",)
    assert attributes(tool)["gen_ai.tool.type"] == "function"


async def ran_status(arguments: str, deps: ExecDeps) -> Outcome:
    return Outcome("ok", exec=ExecRecord("status", 0))


async def test_a_served_tool_call_carries_the_go_served_call_attributes() -> None:
    receiver = Receiver()
    receiver.start()
    broker = InProcessBroker()
    try:
        telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint))
        server = ToolsServer(
            broker.connect(),
            [FakeTool("status", ran_status, kind=Kind.APPLICATION)],
            ToolsOptions(identity="ops", version="1.0.0", max_concurrent=1, tool_timeout=None),
            telemetry=telemetry,
        )
        await server.start()
        await call_tool(broker.connect(), "ops", "status", {}, request_timeout=DEADLINE_DELTA)
        await server.close()
        telemetry.shutdown()
        (served,) = spans_named(receiver, "execute_tool ")
    finally:
        await broker.close()
        receiver.stop()
    assert served.name == "execute_tool status"
    assert set(attributes(served)) >= GO_SERVED_TOOL_ATTRIBUTES
    assert attributes(served)["gen_ai.tool.type"] == "function"
