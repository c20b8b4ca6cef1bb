"""A prompts engine to test against: fixtures starting one over the in-memory transport, and the
helpers its tests share (a raw exchange checking every message against the schemas, a request,
a client, a tool call the test holds).

The fixtures are shared by name: a test module outside this package assigns them
(``agent = engine.agent``) to use them.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol, TypedDict, Unpack

import pytest

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.in_process import InProcessBroker, InProcessTransport
from fisk_ai.a2a.messages import (
    Identity,
    Message,
    RequestPrompt,
    TerminalError,
    TerminalResult,
    new_request,
)
from fisk_ai.a2a.prompts_client import PromptsClient
from fisk_ai.a2a.transport import Delivery, Transport, task_subject
from fisk_ai.a2a.vocabulary import Direction
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.serve.prompts import ConversationNaming, PromptsOptions, PromptsServer
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tools.base import ExecDeps, Outcome, Tool
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from tests.agent.conftest import ops_model, toolset
from tests.fakes.fiskapp import write_fake_app
from tests.fakes.provider import ScriptedProvider
from tests.patience import DEADLINE_DELTA
from tests.serve.wire import assert_conforms

IDENTITY = "ops"
CALLER = Identity(name="peer")
WAIT = DEADLINE_DELTA
SETTINGS = AgentSettings(
    model="test-model", max_iterations=10, max_tokens=100_000, interactive=True
)
OPTIONS = PromptsOptions(identity=IDENTITY, workers=2, request_timeout=WAIT)
"""The engine the tests start unless they say otherwise."""


@dataclass(eq=False)
class Held:
    """A tool call that runs until the test releases it."""

    started: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, arguments: str, deps: ExecDeps) -> Outcome:
        self.started.set()
        await self.release.wait()
        return Outcome("released")


@dataclass
class Agent:
    server: PromptsServer
    provider: ScriptedProvider
    store: FileSessionStore


class EngineOptions(TypedDict, total=False):
    """What a test may change of ``OPTIONS``."""

    workers: int
    elicit: bool
    request_timeout: timedelta
    keepalive_interval: timedelta
    naming: ConversationNaming


class StartAgent(Protocol):
    def __call__(
        self,
        tools: tuple[Tool, ...] = (),
        replies: tuple[Any, ...] = (),
        *,
        transport: Transport | None = None,
        **options: Unpack[EngineOptions],
    ) -> Awaitable[Agent]: ...


@pytest.fixture
def app_tools(tmp_path: Path) -> tuple[Tool, ...]:
    path = write_fake_app(tmp_path, ops_model(), name="ops")
    return tuple(load_application(ApplicationModel.model_validate(ops_model()), str(path)).tools)


@pytest.fixture
async def broker() -> AsyncIterator[InProcessBroker]:
    broker = InProcessBroker()
    yield broker
    await broker.close()


@pytest.fixture
def caller(broker: InProcessBroker) -> InProcessTransport:
    return broker.connect()


@pytest.fixture
async def agent(broker: InProcessBroker, tmp_path: Path) -> AsyncIterator[StartAgent]:
    started: list[PromptsServer] = []

    async def start(
        tools: tuple[Tool, ...] = (),
        replies: tuple[Any, ...] = (),
        *,
        transport: Transport | None = None,
        **options: Unpack[EngineOptions],
    ) -> Agent:
        provider = ScriptedProvider(replies)
        store = FileSessionStore(tmp_path / "runs")
        server = PromptsServer(
            transport or broker.connect(),
            Resources(SETTINGS, provider, toolset(*tools), store),
            dataclasses.replace(OPTIONS, **options),
        )
        await server.start()
        started.append(server)
        return Agent(server, provider, store)

    yield start
    for server in started:
        await server.close()


def client(transport: Transport) -> PromptsClient:
    """A client of the engine's agent, as the tests' caller."""
    return PromptsClient(transport, IDENTITY, request_timeout=WAIT)


async def exchange(transport: Transport, request: Message) -> list[Message]:
    """Send ``request`` and read its whole reply set, checking each message against the
    schemas as it arrives."""
    arrived: asyncio.Queue[Delivery] = asyncio.Queue()

    async def keep(delivery: Delivery) -> None:
        arrived.put_nowait(delivery)

    inbox = await transport.subscribe(transport.new_inbox(), keep)
    await transport.publish(task_subject(IDENTITY), encode(request), reply=inbox.subject)
    messages: list[Message] = []
    while not messages or not isinstance(messages[-1], TerminalResult | TerminalError):
        async with asyncio.timeout(WAIT.total_seconds()):
            delivery = await arrived.get()
        assert_conforms(delivery.data)
        messages.append(decode(delivery.data, direction=Direction.TO_CALLER))
    await inbox.unsubscribe()
    return messages


def prompt(text: str = "how many streams", **fields: Any) -> RequestPrompt:
    return new_request(
        RequestPrompt, sender=CALLER, recipient=Identity(name=IDENTITY), prompt=text, **fields
    )
