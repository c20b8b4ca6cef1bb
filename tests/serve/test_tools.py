"""Serving tools over a real nats-server: the card, calls, refusals, keepalives, bad requests.

Every message the server sends back is checked against the upstream schemas (ours when those
are not beside the checkout) as it arrives.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.a2a.client import call_tool, discover
from fisk_ai.a2a.codec import DEFAULT_MAX_MESSAGE_SIZE, decode, encode
from fisk_ai.a2a.errors import NoResponders, RemoteServiceError
from fisk_ai.a2a.messages import (
    Ack,
    DiscoveryRequest,
    EventStatus,
    Identity,
    Message,
    ToolReply,
    ToolRequest,
    new_request,
)
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.transport import Delivery, tool_subject
from fisk_ai.a2a.vocabulary import Direction, ErrorCode
from fisk_ai.agent.events import StatusPhase
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.serve.tools import ToolsOptions, ToolsServer, select_served_tools
from fisk_ai.tools.base import Kind, Tool
from fisk_ai.tools.fiskapp.introspect import introspect
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.selection import ToolFilter
from tests.fakes.fiskapp import (
    application,
    arg,
    command,
    hangs,
    open_pid_fifo,
    read_pid,
    sample_model,
    wait_for_exit,
    write_fake_app,
)
from tests.fakes.tools import HeldTool
from tests.patience import DEADLINE_DELTA
from tests.serve.wire import assert_conforms

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)

IDENTITY = "ops"
WAIT = DEADLINE_DELTA
CALLER = Identity(name="peer")


@dataclass(eq=False)
class BuiltinTool(HeldTool):
    name: str = "ask_human"
    kind = Kind.BUILTIN
    a2a_exposable = False


@pytest.fixture
async def broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker() as running:
        yield running


@pytest.fixture
async def caller(broker: EmbeddedBroker) -> AsyncIterator[NatsTransport]:
    transport = NatsTransport(await broker.connect(name="caller"))
    yield transport
    await transport.close()
    await transport.client.close()


ServeTools = Callable[..., Awaitable[ToolsServer]]


@pytest.fixture
async def serve(broker: EmbeddedBroker) -> AsyncIterator[ServeTools]:
    started: list[tuple[ToolsServer, NatsTransport]] = []

    async def start(
        tools: Sequence[Tool],
        *,
        max_concurrent: int = 2,
        tool_timeout: timedelta | None = WAIT,
        keepalive_interval: timedelta = timedelta(seconds=10),
    ) -> ToolsServer:
        transport = NatsTransport(await broker.connect(name="server"))
        server = ToolsServer(
            transport,
            tools,
            ToolsOptions(
                identity=IDENTITY,
                version="1.2.0",
                max_concurrent=max_concurrent,
                tool_timeout=tool_timeout,
                keepalive_interval=keepalive_interval,
            ),
        )
        await server.start()
        started.append((server, transport))
        return server

    yield start
    for server, transport in started:
        await server.close()
        await transport.close()
        await transport.client.close()


async def application_tools(directory: Path, model: dict[str, Any]) -> tuple[Tool, ...]:
    app = write_fake_app(directory, model, name="ops")
    return tuple(load_application(await introspect(str(app)), str(app)).tools)


async def exchange(
    transport: NatsTransport,
    data: bytes,
    *,
    on_message: Callable[[Message], None] = lambda message: None,
) -> list[Message]:
    """Send a tool request's bytes and collect its reply set, checking each message's schema,
    until the tool.reply."""
    arrived: asyncio.Queue[Delivery] = asyncio.Queue()

    async def keep(delivery: Delivery) -> None:
        arrived.put_nowait(delivery)

    inbox = await transport.subscribe(transport.new_inbox(), keep)
    await transport.publish(tool_subject(IDENTITY), data, reply=inbox.subject)
    messages: list[Message] = []
    while not messages or not isinstance(messages[-1], ToolReply):
        delivery = await asyncio.wait_for(arrived.get(), WAIT.total_seconds())
        assert_conforms(delivery.data)
        message = decode(delivery.data, direction=Direction.TO_CALLER)
        messages.append(message)
        on_message(message)
    await inbox.unsubscribe()
    return messages


def tool_request(name: str, **tool_input: Any) -> bytes:
    return encode(new_request(ToolRequest, sender=CALLER, name=name, input=tool_input))


async def test_the_card_leaves_out_gated_and_builtin_tools(
    tmp_path: Path, serve: ServeTools, caller: NatsTransport
) -> None:
    tools = [*await application_tools(tmp_path, sample_model()), BuiltinTool()]
    selection = select_served_tools(tools, confirm_tags=["impact:rw"])
    await serve(selection.exposed)

    card = await discover(caller, IDENTITY, timeout=WAIT, sender=CALLER)

    assert [tool.name for tool in card.tools] == ["status", "stream_ls"]
    assert (card.name, card.version, card.protocols) == (
        IDENTITY,
        "1.2.0",
        ("io.choria.fisk-ai.v1",),
    )
    assert card.tools[0].behavior is not None and card.tools[0].behavior.read_only
    assert selection.withheld == ("ask_human",)
    assert dict(selection.gated) == {"stream_rm": "ai:confirm", "cache_purge": "impact:rw"}


async def test_the_card_conforms_to_the_schemas(
    tmp_path: Path, serve: ServeTools, caller: NatsTransport
) -> None:
    await serve(await application_tools(tmp_path, sample_model()))
    request = new_request(DiscoveryRequest, sender=CALLER)

    assert_conforms(
        await caller.request(f"choria.fisk-ai.discovery.{IDENTITY}", encode(request), timeout=WAIT)
    )


def test_expose_agent_tools_narrows_the_selection() -> None:
    tools = [HeldTool(name="stream_ls"), HeldTool(name="stream_info"), HeldTool(name="status")]

    selection = select_served_tools(
        tools, include=ToolFilter(tools=("^stream_",)), exclude=ToolFilter(tools=("info",))
    )

    assert [tool.name for tool in selection.exposed] == ["stream_ls"]


async def test_a_call_runs_the_command_and_returns_output_and_exec(
    tmp_path: Path, serve: ServeTools, caller: NatsTransport
) -> None:
    model = application(
        "ops",
        commands=[
            command(
                "stream",
                "Streams",
                commands=[
                    command(
                        "info", "Stream info", args=[arg("stream", "Stream name", required=True)]
                    )
                ],
            )
        ],
    )
    await serve(await application_tools(tmp_path, model))

    messages = await exchange(caller, tool_request("stream_info", stream="ORDERS"))

    ack, reply = messages
    assert isinstance(ack, Ack) and ack.accepted and ack.sequence == 1
    assert isinstance(reply, ToolReply) and not reply.is_error and reply.sequence == 2
    assert json.loads(reply.output)["argv"] == ["stream", "info", "--", "ORDERS"]
    assert reply.exec is not None
    assert (reply.exec.command, reply.exec.exit_code) == ("stream info -- ORDERS", 0)


async def test_call_tool_returns_the_reply(
    tmp_path: Path, serve: ServeTools, caller: NatsTransport
) -> None:
    await serve(await application_tools(tmp_path, sample_model()))

    reply = await call_tool(caller, IDENTITY, "status", {}, request_timeout=WAIT, sender=CALLER)

    assert not reply.is_error
    assert json.loads(reply.output)["argv"] == ["status"]


async def test_an_unknown_tool_is_answered_as_not_available(
    serve: ServeTools, caller: NatsTransport
) -> None:
    await serve([HeldTool()])

    messages = await exchange(caller, tool_request("stream_rm"))

    ack, reply = messages
    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(reply, ToolReply) and reply.is_error
    assert reply.output == 'tool "stream_rm" is not available'


async def test_a_call_with_every_slot_busy_is_refused_for_capacity(
    serve: ServeTools, caller: NatsTransport
) -> None:
    held = HeldTool()
    await serve([held], max_concurrent=1)
    first = asyncio.create_task(
        call_tool(caller, IDENTITY, "held", {}, request_timeout=WAIT, sender=CALLER)
    )
    await asyncio.wait_for(held.started.wait(), WAIT.total_seconds())

    ack, reply = await exchange(caller, tool_request("held"))

    assert isinstance(ack, Ack) and not ack.accepted and ack.reason
    assert isinstance(reply, ToolReply) and reply.is_error and reply.code is ErrorCode.CAPACITY
    held.release.set()
    assert not (await first).is_error


async def test_a_slot_is_free_again_once_its_call_ends(
    serve: ServeTools, caller: NatsTransport
) -> None:
    held = HeldTool()
    held.release.set()
    await serve([held], max_concurrent=1)

    for _ in range(3):
        reply = await call_tool(caller, IDENTITY, "held", {}, request_timeout=WAIT)
        assert not reply.is_error


async def test_a_long_call_sends_keepalives_until_its_reply(
    serve: ServeTools, caller: NatsTransport
) -> None:
    held = HeldTool()
    await serve([held], keepalive_interval=timedelta(milliseconds=20))

    def release_on_keepalive(message: Message) -> None:
        if isinstance(message, EventStatus):
            held.release.set()

    messages = await exchange(caller, tool_request("held"), on_message=release_on_keepalive)

    assert (
        isinstance(messages[1], EventStatus)
        and messages[1].block.phase == StatusPhase.EXECUTING_TOOL
    )
    assert isinstance(messages[-1], ToolReply) and not messages[-1].is_error
    assert [message.sequence for message in messages] == list(range(1, len(messages) + 1))


async def test_tool_timeout_stops_the_command(
    tmp_path: Path, serve: ServeTools, caller: NatsTransport
) -> None:
    fifo = open_pid_fifo(tmp_path / "pid")
    model = application("ops", commands=[command("wait", "Waits", action=hangs(tmp_path / "pid"))])
    await serve(await application_tools(tmp_path, model), tool_timeout=timedelta(milliseconds=300))
    call = asyncio.create_task(
        call_tool(caller, IDENTITY, "wait", {}, request_timeout=WAIT, sender=CALLER)
    )
    child = await read_pid(fifo)

    reply = await call

    assert reply.is_error
    assert "expose.agent.a2a.tool_timeout" in reply.output
    assert await wait_for_exit(child)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"not json", id="malformed"),
        pytest.param(b'{"a":' * 5000 + b"1" + b"}" * 5000, id="nested"),
        pytest.param(b'{"a":' + b"[" * 150 + b"]" * 150 + b"}", id="nested-past-the-bound"),
        pytest.param(b"{" + b" " * DEFAULT_MAX_MESSAGE_SIZE + b"}", id="oversized"),
        pytest.param(encode(new_request(DiscoveryRequest, sender=CALLER)), id="wrong-protocol"),
        pytest.param(
            json.dumps({"protocol": "io.choria.fisk-ai.v1.ack", "accepted": True}).encode(),
            id="wrong-direction",
        ),
        pytest.param(
            json.dumps({"protocol": "io.choria.fisk-ai.v9.tool.request"}).encode(),
            id="unknown-protocol",
        ),
    ],
)
async def test_a_bad_request_gets_a_400_and_the_server_keeps_serving(
    data: bytes, serve: ServeTools, caller: NatsTransport
) -> None:
    held = HeldTool()
    held.release.set()
    await serve([held])

    with pytest.raises(RemoteServiceError) as raised:
        await caller.request(tool_subject(IDENTITY), data, timeout=WAIT)

    assert raised.value.service_code == 400
    assert not (await call_tool(caller, IDENTITY, "held", {}, request_timeout=WAIT)).is_error


async def test_a_drained_server_answers_nothing(serve: ServeTools, caller: NatsTransport) -> None:
    server = await serve([HeldTool()])

    await server.drain()

    with pytest.raises(NoResponders, match="remote agent unavailable"):
        await discover(caller, IDENTITY, timeout=WAIT)
    with pytest.raises(NoResponders, match="remote agent unavailable"):
        await call_tool(caller, IDENTITY, "held", {}, request_timeout=WAIT)
