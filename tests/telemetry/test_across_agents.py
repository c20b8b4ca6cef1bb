"""Trace context across agents: a prompt sent from inside a span carries its traceparent, and
the agent answering it continues that trace and says so on the terminal message."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from fisk_ai.a2a.in_process import InProcessBroker
from fisk_ai.a2a.messages import TerminalError, TerminalResult
from fisk_ai.a2a.prompts_client import PromptsClient
from fisk_ai.a2a.transport import SUBJECT_PREFIX
from fisk_ai.agent.resources import Resources
from fisk_ai.serve.prompts import PromptsServer
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.telemetry import Telemetry, TelemetrySettings, current_traceparent, start
from tests.agent.conftest import toolset
from tests.fakes.provider import ScriptedProvider, answer
from tests.serve.prompts.engine import IDENTITY, OPTIONS, SETTINGS, WAIT
from tests.telemetry.receiver import Receiver, attributes

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture
async def broker() -> AsyncIterator[InProcessBroker]:
    broker = InProcessBroker()
    yield broker
    await broker.close()


async def serve(broker: InProcessBroker, tmp_path: Path, telemetry: Telemetry) -> PromptsServer:
    server = PromptsServer(
        broker.connect(),
        Resources(
            SETTINGS,
            ScriptedProvider([answer("forty-two")]),
            toolset(),
            FileSessionStore(tmp_path / "runs"),
            telemetry=telemetry,
        ),
        OPTIONS,
    )
    await server.start()
    return server


def live(receiver: Receiver, name: str, **changes: object) -> Telemetry:
    values: dict[str, object] = {
        "enabled": True,
        "endpoint": receiver.endpoint,
        "no_metrics": True,
        "service_name": name,
    }
    values.update(changes)
    return start(TelemetrySettings(**values))  # type: ignore[arg-type]


async def test_two_agents_one_delegating_to_the_other_are_one_trace(
    receiver: Receiver, broker: InProcessBroker, tmp_path: Path
) -> None:
    caller, worker = live(receiver, "caller"), live(receiver, "worker", capture=True)
    server = await serve(broker, tmp_path, worker)
    client = PromptsClient(broker.connect(), IDENTITY, request_timeout=WAIT)
    try:
        with caller.run("caller", traceparent=PARENT):
            sent = current_traceparent()
            terminal = await client.ask("what is the answer")
    finally:
        await server.close()
    caller.shutdown()
    worker.shutdown()

    assert isinstance(terminal, TerminalResult), terminal
    assert terminal.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert terminal.content_exported
    roots = {span.name: span for span in receiver.spans() if span.name.startswith("invoke_agent")}
    # The engine's settings name no identity, so its root is the bare operation; the caller's
    # request to agent "ops" is a client span of its own.
    assert set(roots) == {"invoke_agent caller", "invoke_agent ops", "invoke_agent"}
    assert {span.trace_id.hex() for span in receiver.spans()} == {terminal.trace_id}
    served, request, calling = (
        roots["invoke_agent"],
        roots["invoke_agent ops"],
        roots["invoke_agent caller"],
    )
    assert request.kind == Span.SPAN_KIND_CLIENT
    assert attributes(request)["fisk.a2a.request"] == "prompt"
    assert request.parent_span_id == calling.span_id
    # The served run hangs off the request's span, not the one current before it was sent.
    assert served.parent_span_id == request.span_id
    assert served.kind == Span.SPAN_KIND_SERVER
    assert sent.split("-")[2] == calling.span_id.hex()


async def test_a_served_prompt_continues_the_traceparent_its_caller_sent(
    receiver: Receiver, broker: InProcessBroker, tmp_path: Path
) -> None:
    from tests.serve.prompts.engine import exchange, prompt

    worker = live(receiver, "worker")
    server = await serve(broker, tmp_path, worker)
    try:
        *_, terminal = await exchange(broker.connect(), prompt(traceparent=PARENT))
    finally:
        await server.close()
    worker.shutdown()

    assert isinstance(terminal, TerminalResult)
    assert terminal.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert not terminal.content_exported
    (root,) = [span for span in receiver.spans() if span.name.startswith("invoke_agent")]
    assert root.parent_span_id.hex() == "00f067aa0ba902b7"
    # Sent once the run is over, the terminal hangs off the served run's root span.
    assert terminal.traceparent == f"00-{terminal.trace_id}-{root.span_id.hex()}-01"


async def test_without_telemetry_results_carry_no_trace_and_requests_no_traceparent(
    broker: InProcessBroker, tmp_path: Path
) -> None:
    from fisk_ai.telemetry import DISABLED

    server = await serve(broker, tmp_path, DISABLED)
    seen: list[bytes] = []
    listener = broker.connect()

    async def keep(delivery: object) -> None:
        seen.append(delivery.data)  # type: ignore[attr-defined]

    await listener.subscribe(f"{SUBJECT_PREFIX}.>", keep)
    client = PromptsClient(broker.connect(), IDENTITY, request_timeout=WAIT)
    try:
        terminal = await client.ask("what is the answer")
    finally:
        await server.close()
    assert isinstance(terminal, TerminalResult | TerminalError)
    assert terminal.trace_id == ""
    assert not terminal.content_exported
    assert seen
    assert all(b'"traceparent"' not in data for data in seen)


async def test_a_remote_tool_call_carries_the_current_spans_traceparent(
    receiver: Receiver, broker: InProcessBroker
) -> None:
    from datetime import timedelta

    from fisk_ai.a2a.client import call_tool
    from fisk_ai.a2a.codec import decode
    from fisk_ai.a2a.errors import A2AError
    from fisk_ai.a2a.messages import ToolRequest
    from fisk_ai.a2a.transport import Delivery, tool_subject
    from fisk_ai.a2a.vocabulary import Direction

    sent: list[ToolRequest] = []

    async def keep(delivery: Delivery) -> None:
        message = decode(delivery.data, direction=Direction.TO_AGENT)
        assert isinstance(message, ToolRequest)
        sent.append(message)

    await broker.connect().subscribe(tool_subject("peer"), keep)
    caller = live(receiver, "caller")
    # Nobody answers: the request went out, which is all this test reads.
    with caller.run("caller"), caller.tool_call("peer_status"), pytest.raises(A2AError):
        await call_tool(
            broker.connect(), "peer", "status", {}, request_timeout=timedelta(seconds=0.2)
        )
    caller.shutdown()
    (request,) = sent
    spans = {span.name: span for span in receiver.spans()}
    remote, local = spans["invoke_agent peer"], spans["execute_tool peer_status"]
    assert remote.kind == Span.SPAN_KIND_CLIENT
    assert attributes(remote)["fisk.tool.remote_agent"] == "peer"
    assert remote.parent_span_id == local.span_id
    # A peer that never answered is a classed failure on the call's span.
    assert attributes(remote)["error.type"] == "_OTHER"
    assert request.traceparent is not None
    assert request.traceparent.split("-")[2] == remote.span_id.hex()


def test_every_ending_carries_the_trace_and_content_is_never_claimed_without_one() -> None:
    from fisk_ai.a2a.codec import decode, encode
    from fisk_ai.a2a.messages import Identity, RequestPrompt, new_request, reply_header
    from fisk_ai.a2a.outcome import terminal_message
    from fisk_ai.a2a.vocabulary import Direction
    from fisk_ai.agent.outcome import Failed, RunResult

    request = new_request(
        RequestPrompt, sender=Identity(name="peer"), recipient=Identity(name="ops"), prompt="hi"
    )
    header = reply_header(request, sender=Identity(name="ops"))
    failed = RunResult(Failed("the model call failed"), "s1")
    ended = terminal_message(
        failed, header, identity="ops", trace_id="4bf92f3577b34da6a3ce929d0e0e4736"
    )
    assert isinstance(ended, TerminalError)
    read = decode(encode(ended), direction=Direction.TO_CALLER)
    assert isinstance(read, TerminalError)
    assert read.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    untraced = terminal_message(failed, header, identity="ops", content_exported=True)
    assert untraced.trace_id == ""
    assert not untraced.content_exported


async def test_a_worker_at_ratio_zero_still_records_a_delegation_its_caller_sampled(
    receiver: Receiver, broker: InProcessBroker, tmp_path: Path
) -> None:
    caller, worker = live(receiver, "caller"), live(receiver, "worker", sample_ratio=0.0)
    server = await serve(broker, tmp_path, worker)
    client = PromptsClient(broker.connect(), IDENTITY, request_timeout=WAIT)
    try:
        with caller.run("caller"):
            terminal = await client.ask("what is the answer")
    finally:
        await server.close()
    caller.shutdown()
    worker_delivery = worker.shutdown()

    assert worker_delivery.delivered > 0
    spans = {span.name: span for span in receiver.spans()}
    assert spans["invoke_agent"].parent_span_id == spans["invoke_agent ops"].span_id
    assert {span.trace_id.hex() for span in spans.values()} == {terminal.trace_id}


async def test_a_caller_that_samples_nothing_cannot_switch_the_workers_recording_off(
    receiver: Receiver, broker: InProcessBroker, tmp_path: Path
) -> None:
    caller, worker = live(receiver, "caller", sample_ratio=0.0), live(receiver, "worker")
    server = await serve(broker, tmp_path, worker)
    client = PromptsClient(broker.connect(), IDENTITY, request_timeout=WAIT)
    try:
        with caller.run("caller"):
            sent = current_traceparent()
            terminal = await client.ask("what is the answer")
    finally:
        await server.close()
    assert caller.shutdown().attempted == 0
    worker.shutdown()

    # The caller's context says not sampled; the worker records anyway, in the caller's trace.
    assert int(sent.split("-")[3], 16) & 1 == 0
    assert isinstance(terminal, TerminalResult)
    assert terminal.trace_id == sent.split("-")[1]
    assert receiver.service_names() == {"worker"}
    (served,) = [span for span in receiver.spans() if span.name == "invoke_agent"]
    assert served.trace_id.hex() == terminal.trace_id
