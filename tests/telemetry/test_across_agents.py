"""Trace context across agents: a prompt sent from inside a span carries its traceparent, and
the agent answering it continues that trace and says so on the terminal message."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.a2a.memory import MemoryBroker
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
from tests.telemetry.receiver import Receiver

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture
async def broker() -> AsyncIterator[MemoryBroker]:
    broker = MemoryBroker()
    yield broker
    await broker.close()


async def serve(broker: MemoryBroker, tmp_path: Path, telemetry: Telemetry) -> PromptsServer:
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
    receiver: Receiver, broker: MemoryBroker, tmp_path: Path
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
    # The engine's settings name no identity, so its root is the bare operation.
    assert set(roots) == {"invoke_agent caller", "invoke_agent"}
    assert {span.trace_id.hex() for span in receiver.spans()} == {terminal.trace_id}
    # The served run hangs off the span that was current when the caller sent the prompt.
    served, calling = roots["invoke_agent"], roots["invoke_agent caller"]
    assert served.parent_span_id == calling.span_id
    assert sent.split("-")[2] == calling.span_id.hex()


async def test_a_served_prompt_continues_the_traceparent_its_caller_sent(
    receiver: Receiver, broker: MemoryBroker, tmp_path: Path
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


async def test_without_telemetry_results_carry_no_trace_and_requests_no_traceparent(
    broker: MemoryBroker, tmp_path: Path
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
    receiver: Receiver, broker: MemoryBroker
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
    with caller.run("caller") as _, caller.tool_call("status"):
        current = current_traceparent()
        # Nobody answers: the request went out, which is all this test reads.
        with pytest.raises(A2AError):
            await call_tool(
                broker.connect(), "peer", "status", {}, request_timeout=timedelta(seconds=0.2)
            )
    caller.shutdown()
    (request,) = sent
    assert current
    assert request.traceparent == current


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
