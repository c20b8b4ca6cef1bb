"""The A2A HTTP endpoint continues the W3C trace of the request that opens a task: the a2a-sdk's
own server parts in process, reached over an ASGI transport with the a2a-sdk client, in front of
a prompts engine on the in-memory broker whose spans go to a real OTLP receiver."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_text_message
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import Role, SendMessageRequest, Task, TaskState
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from starlette.applications import Starlette

from fisk_ai.a2a.in_process import InProcessBroker
from fisk_ai.a2a.prompts_client import PromptsClient
from fisk_ai.agent.resources import Resources
from fisk_ai.serve.a2a_http.card import agent_card
from fisk_ai.serve.a2a_http.executor import PromptsExecutor
from fisk_ai.serve.prompts import PromptsServer
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.telemetry import Telemetry, TelemetrySettings, start
from fisk_ai.telemetry.facade import activated
from tests.agent.conftest import toolset
from tests.fakes.provider import ScriptedProvider, answer
from tests.serve.prompts.engine import IDENTITY, OPTIONS, SETTINGS, WAIT
from tests.telemetry import conftest as telemetry_fixtures
from tests.telemetry.receiver import Receiver

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
CALLER_TRACEPARENT = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"
DOOR_URL = "http://door.test"

receiver = telemetry_fixtures.receiver


@pytest.fixture
async def broker() -> AsyncIterator[InProcessBroker]:
    broker = InProcessBroker()
    yield broker
    await broker.close()


@pytest.fixture
async def worker(
    receiver: Receiver, broker: InProcessBroker, tmp_path: Path
) -> AsyncIterator[Telemetry]:
    """The agent answering the door's prompts, exporting its spans to ``receiver``."""
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint, no_metrics=True))
    server = PromptsServer(
        broker.connect(),
        Resources(
            SETTINGS,
            ScriptedProvider([answer("the fleet is green")]),
            toolset(),
            FileSessionStore(tmp_path / "runs"),
            telemetry=telemetry,
        ),
        OPTIONS,
    )
    await server.start()
    yield telemetry
    await server.close()
    telemetry.shutdown()


def door(broker: InProcessBroker) -> Starlette:
    """The endpoint as `fisk serve` builds it, minus the listening socket and the card route."""
    card = agent_card(
        identity=IDENTITY, version="test", application="", url=DOOR_URL, tools=[], bearer=False
    )
    executor = PromptsExecutor(
        PromptsClient(broker.connect(), IDENTITY, request_timeout=WAIT), question_window=WAIT
    )
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(routes=create_jsonrpc_routes(handler, rpc_url="/"))


async def ask_over_http(broker: InProcessBroker, headers: dict[str, str]) -> Task:
    card = agent_card(
        identity=IDENTITY, version="test", application="", url=DOOR_URL, tools=[], bearer=False
    )
    transport = httpx.ASGITransport(app=door(broker))
    async with httpx.AsyncClient(
        transport=transport, base_url=DOOR_URL, headers=headers, timeout=WAIT.total_seconds()
    ) as http:
        client = await create_client(card, ClientConfig(httpx_client=http, streaming=False))
        message = new_text_message("how is the fleet")
        message.role = Role.ROLE_USER
        responses = [r async for r in client.send_message(SendMessageRequest(message=message))]
    (response,) = responses
    assert response.task.status.state == TaskState.TASK_STATE_COMPLETED, response
    return response.task


def served_run(receiver: Receiver) -> Span:
    """The root span of the agent's run; the engine's settings name no identity."""
    (root,) = [span for span in receiver.spans() if span.name == "invoke_agent"]
    return root


async def test_a_task_opened_with_a_traceparent_header_is_part_of_the_callers_trace(
    receiver: Receiver, broker: InProcessBroker, worker: Telemetry
) -> None:
    await ask_over_http(broker, {"traceparent": CALLER_TRACEPARENT})
    worker.shutdown()

    root = served_run(receiver)
    assert root.trace_id.hex() == CALLER_TRACE
    assert root.parent_span_id.hex() == CALLER_SPAN
    assert {span.trace_id.hex() for span in receiver.spans()} == {CALLER_TRACE}


async def test_a_task_opened_without_a_traceparent_starts_a_trace_of_its_own(
    receiver: Receiver, broker: InProcessBroker, worker: Telemetry
) -> None:
    await ask_over_http(broker, {})
    worker.shutdown()

    root = served_run(receiver)
    assert root.parent_span_id == b""
    assert root.trace_id.hex() != CALLER_TRACE


async def test_a_malformed_traceparent_header_is_ignored(
    receiver: Receiver, broker: InProcessBroker, worker: Telemetry
) -> None:
    await ask_over_http(broker, {"traceparent": f"00-{CALLER_TRACE}-not-a-span-01"})
    worker.shutdown()

    root = served_run(receiver)
    assert root.parent_span_id == b""
    assert root.trace_id.hex() != CALLER_TRACE


async def test_a_door_that_exports_hangs_its_request_span_off_the_callers_span(
    receiver: Receiver, broker: InProcessBroker, worker: Telemetry
) -> None:
    with activated(worker):
        await ask_over_http(broker, {"traceparent": CALLER_TRACEPARENT})
    worker.shutdown()

    (request,) = [span for span in receiver.spans() if span.name == f"invoke_agent {IDENTITY}"]
    assert request.kind == Span.SPAN_KIND_CLIENT
    assert request.parent_span_id.hex() == CALLER_SPAN
    assert served_run(receiver).parent_span_id == request.span_id
