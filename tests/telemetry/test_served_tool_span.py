"""A tool call this agent serves over a2a is an ``execute_tool`` server span, as in Go: it
continues the caller's trace under the caller's hop span, and says how the call ended, refusals
included. Caller and server talk over the in-memory broker and export to one receiver."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from fisk_ai.a2a.client import DEFAULT_CLIENT_IDENTITY, call_tool
from fisk_ai.a2a.in_process import InProcessBroker
from fisk_ai.a2a.messages import ToolReply
from fisk_ai.a2a.vocabulary import ErrorCode
from fisk_ai.serve.tools import ToolsOptions, ToolsServer
from fisk_ai.telemetry import Telemetry, TelemetrySettings, start
from fisk_ai.tools.base import Tool
from fisk_ai.tools.fiskapp.introspect import introspect
from fisk_ai.tools.fiskapp.loader import load_application
from tests.fakes.fiskapp import application, command, echoes, write_fake_app
from tests.fakes.tools import HeldTool
from tests.patience import DEADLINE_DELTA
from tests.telemetry.receiver import Receiver, attributes

SERVING = "ops-tools"


@pytest.fixture
async def broker() -> AsyncIterator[InProcessBroker]:
    broker = InProcessBroker()
    yield broker
    await broker.close()


def live(receiver: Receiver, name: str, *, metrics: bool = False) -> Telemetry:
    return start(
        TelemetrySettings(
            enabled=True, endpoint=receiver.endpoint, no_metrics=not metrics, service_name=name
        )
    )


async def serve(
    broker: InProcessBroker, tools: Sequence[Tool], telemetry: Telemetry, *, max_concurrent: int = 2
) -> ToolsServer:
    server = ToolsServer(
        broker.connect(),
        tools,
        ToolsOptions(
            identity=SERVING, version="1.0.0", max_concurrent=max_concurrent, tool_timeout=None
        ),
        telemetry=telemetry,
    )
    await server.start()
    return server


async def call(broker: InProcessBroker, name: str) -> ToolReply:
    return await call_tool(broker.connect(), SERVING, name, {}, request_timeout=DEADLINE_DELTA)


async def served_once(broker: InProcessBroker, receiver: Receiver, tool: Tool, name: str) -> Span:
    """Serve ``tool``, call ``name`` once from outside any trace, and return the served span."""
    worker = live(receiver, "worker")
    server = await serve(broker, [tool], worker)
    try:
        await call(broker, name)
    finally:
        await server.close()
    worker.shutdown()
    (served,) = [span for span in receiver.spans() if span.kind == Span.SPAN_KIND_SERVER]
    return served


async def test_a_served_call_is_a_child_of_the_callers_hop_span(
    receiver: Receiver, broker: InProcessBroker
) -> None:
    held = HeldTool()
    held.release.set()
    caller, worker = live(receiver, "caller"), live(receiver, "worker")
    server = await serve(broker, [held], worker)
    try:
        with caller.run("caller"), caller.tool_call("ops_held", kind="remote"):
            reply = await call(broker, "held")
    finally:
        await server.close()
    caller.shutdown()
    worker.shutdown()

    assert not reply.is_error
    spans = {span.name: span for span in receiver.spans()}
    hop, served = spans[f"invoke_agent {SERVING}"], spans["execute_tool held"]
    assert served.kind == Span.SPAN_KIND_SERVER
    assert served.trace_id == hop.trace_id
    assert served.parent_span_id == hop.span_id


async def test_a_served_span_carries_gos_served_call_attributes(
    receiver: Receiver, broker: InProcessBroker
) -> None:
    held = HeldTool()
    held.release.set()
    worker = live(receiver, "worker")
    server = await serve(broker, [held], worker)
    try:
        reply = await call(broker, "held")
    finally:
        await server.close()
    worker.shutdown()

    (served,) = receiver.spans()
    assert served.name == "execute_tool held"
    assert attributes(served) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.name": "held",
        "gen_ai.agent.name": SERVING,
        "fisk.served.request": reply.request,
        # The transport vouches for no caller; the sender is only what the message claims.
        "fisk.served.caller_verified": False,
        "fisk.served.sender": DEFAULT_CLIENT_IDENTITY.name,
        "fisk.tool.outcome": "executed",
    }
    assert served.status.code != Status.STATUS_CODE_ERROR


async def test_a_call_from_outside_any_trace_is_a_root(
    receiver: Receiver, broker: InProcessBroker
) -> None:
    held = HeldTool()
    held.release.set()
    served = await served_once(broker, receiver, held, "held")
    assert served.parent_span_id == b""


async def test_an_unknown_tool_is_named_only_in_an_attribute(
    receiver: Receiver, broker: InProcessBroker
) -> None:
    served = await served_once(broker, receiver, HeldTool(), "rm -rf")

    assert served.name == "execute_tool unknown_tool"
    found = attributes(served)
    assert found["fisk.tool.requested_name"] == "rm -rf"
    assert "gen_ai.tool.name" not in found
    assert found["fisk.tool.outcome"] == "unknown_tool"
    assert found["error.type"] == "tool_error"
    assert served.status.code == Status.STATUS_CODE_ERROR


async def test_a_call_refused_for_capacity_is_a_span_saying_so(
    receiver: Receiver, broker: InProcessBroker
) -> None:
    held = HeldTool()
    worker = live(receiver, "worker")
    server = await serve(broker, [held], worker, max_concurrent=1)
    try:
        first = asyncio.create_task(call(broker, "held"))
        await held.started.wait()
        refused = await call(broker, "held")
        held.release.set()
        await first
    finally:
        await server.close()
    worker.shutdown()

    assert refused.code == ErrorCode.CAPACITY
    outcomes = sorted(attributes(span)["fisk.tool.outcome"] for span in receiver.spans())
    assert outcomes == ["capacity", "executed"]
    (capacity,) = [
        span for span in receiver.spans() if attributes(span)["fisk.tool.outcome"] == "capacity"
    ]
    assert capacity.name == "execute_tool held"
    assert attributes(capacity)["error.type"] == "tool_error"


async def test_a_command_exiting_non_zero_reports_its_exit_code_as_an_executed_call(
    receiver: Receiver, broker: InProcessBroker, tmp_path: Path
) -> None:
    app = write_fake_app(
        tmp_path, application("ops", commands=[command("check", action=echoes(exit_code=3))])
    )
    (check,) = load_application(await introspect(str(app)), str(app)).tools

    served = await served_once(broker, receiver, check, "check")

    found = attributes(served)
    assert found["fisk.tool.exit_code"] == 3
    # A non-zero exit is an ordinary answer, as in Go: the caller was not told the call failed.
    assert found["fisk.tool.outcome"] == "executed"
    assert "error.type" not in found


async def test_a_served_call_records_no_tool_metric(
    receiver: Receiver, broker: InProcessBroker
) -> None:
    held = HeldTool()
    held.release.set()
    worker = live(receiver, "worker", metrics=True)
    server = await serve(broker, [held], worker)
    try:
        await call(broker, "held")
    finally:
        await server.close()
    worker.shutdown()

    assert [span.name for span in receiver.spans()] == ["execute_tool held"]
    assert not receiver.metric_points("gen_ai.execute_tool.duration")
    assert not receiver.metric_points("fisk.tool.calls")
