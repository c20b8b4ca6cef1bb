"""Answering prompts over a2a: the reply set, questions, cancel, follow-up turns and refusals.

Most tests run over the in-memory transport; one goes over a real nats-server. Every message the
engine sends is checked against the upstream schemas (ours when those are not beside the
checkout).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import RemoteServiceError
from fisk_ai.a2a.memory import MemoryBroker, MemoryTransport
from fisk_ai.a2a.messages import (
    Ack,
    Cancel,
    Direction,
    ElicitRequestApprove,
    ElicitWaiting,
    ErrorCode,
    EventMessage,
    EventStatus,
    EventText,
    EventToolCall,
    Identity,
    Message,
    RequestPrompt,
    RequestResume,
    StopReason,
    TerminalError,
    TerminalResult,
    ToolRequest,
    UnknownEvent,
    new_request,
)
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.prompts_client import ask
from fisk_ai.a2a.prompts_server import (
    KEEPALIVE_PHASE,
    SERVED,
    ConversationNaming,
    PromptsServer,
    conversation_session_id,
)
from fisk_ai.a2a.transport import (
    Delivery,
    Transport,
    cancel_subject,
    elicit_subject,
    task_subject,
)
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tools.base import ExecDeps, Outcome, Tool
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.questions import Answer, ApprovalChoice, Question
from tests.a2a.test_tools_server import assert_conforms
from tests.agent.conftest import FakeTool, ops_model, toolset
from tests.fakes.fiskapp import write_fake_app
from tests.fakes.prompter import ScriptedPrompter
from tests.fakes.provider import ScriptedProvider, answer, call, calls

IDENTITY = "ops"
CALLER = Identity(name="peer")
WAIT = timedelta(seconds=10)
SETTINGS = AgentSettings(
    model="test-model", max_iterations=10, max_tokens=100_000, interactive=True
)


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


StartAgent = Callable[..., Awaitable[Agent]]


@pytest.fixture
def app_tools(tmp_path: Path) -> tuple[Tool, ...]:
    path = write_fake_app(tmp_path, ops_model(), name="ops")
    return tuple(load_application(ApplicationModel.model_validate(ops_model()), str(path)).tools)


@pytest.fixture
async def broker() -> AsyncIterator[MemoryBroker]:
    broker = MemoryBroker()
    yield broker
    await broker.close()


@pytest.fixture
def caller(broker: MemoryBroker) -> MemoryTransport:
    return broker.connect()


@pytest.fixture
async def agent(broker: MemoryBroker, tmp_path: Path) -> AsyncIterator[StartAgent]:
    started: list[PromptsServer] = []

    async def start(
        tools: tuple[Tool, ...] = (),
        replies: tuple[Any, ...] = (),
        *,
        workers: int = 2,
        elicit: bool = False,
        request_timeout: timedelta = WAIT,
        transport: Transport | None = None,
        keepalive_interval: timedelta = timedelta(seconds=10),
        naming: ConversationNaming = SERVED,
    ) -> Agent:
        provider = ScriptedProvider(replies)
        store = FileSessionStore(tmp_path / "runs")
        server = PromptsServer(
            transport or broker.connect(),
            identity=IDENTITY,
            settings=SETTINGS,
            provider=provider,
            tools=toolset(*tools),
            store=store,
            workers=workers,
            request_timeout=request_timeout,
            elicit=elicit,
            keepalive_interval=keepalive_interval,
            naming=naming,
        )
        await server.start()
        started.append(server)
        return Agent(server, provider, store)

    yield start
    for server in started:
        await server.close()


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


async def test_a_prompt_is_answered_with_ack_events_and_result_in_sequence(
    agent: StartAgent, caller: MemoryTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(app_tools, (calls(call("t1", "status"), text="checking"), answer("two streams")))

    messages = await exchange(caller, prompt())

    ack, *events, result = messages
    assert isinstance(ack, Ack) and ack.accepted and ack.conversation_token
    assert [message.sequence for message in messages] == list(range(1, len(messages) + 1))
    assert any(isinstance(event, EventToolCall) for event in events)
    assert isinstance(result, TerminalResult)
    assert (result.stop_reason, result.text) == (StopReason.END_TURN, "two streams")
    assert result.usage is not None
    assert (result.usage.llm_calls, result.usage.tool_calls) == (2, 1)


async def test_the_conversation_is_journaled_under_the_token_derived_id(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    started = await agent(replies=(answer("hi"),))

    ack, *_ = await exchange(caller, prompt())

    assert isinstance(ack, Ack) and ack.conversation_token is not None
    session_id = conversation_session_id(IDENTITY, ack.conversation_token)
    assert session_id.startswith("t-") and len(session_id) == 2 + 64
    assert await started.store.read(session_id)


async def test_the_client_returns_the_result_and_passes_events_on(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    await agent(replies=(answer("hello there"),))
    seen: list[EventMessage | UnknownEvent] = []

    result = await ask(caller, IDENTITY, "hi", request_timeout=WAIT, on_event=seen.append)

    assert isinstance(result, TerminalResult) and result.text == "hello there"
    assert any(isinstance(event, EventText) and event.block.final for event in seen)


async def test_an_approval_is_put_to_the_caller_and_answered_once(
    agent: StartAgent, caller: MemoryTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(
        app_tools,
        (calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("removed")),
        elicit=True,
    )
    prompter = ScriptedPrompter([ApprovalChoice.ONCE])

    result = await ask(caller, IDENTITY, "remove ORDERS", request_timeout=WAIT, prompter=prompter)

    assert isinstance(result, TerminalResult) and result.text == "removed"
    [question] = prompter.questions
    assert "ORDERS" in getattr(question, "display", "")


async def test_an_approval_nobody_answers_ends_the_run_suspended(
    agent: StartAgent, caller: MemoryTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(
        app_tools,
        (calls(call("t1", "stream_rm", {"stream": "ORDERS"})),),
        elicit=True,
        request_timeout=timedelta(milliseconds=200),
    )

    messages = await exchange(caller, prompt("remove ORDERS"))

    question = next(m for m in messages if isinstance(m, ElicitRequestApprove))
    assert (question.tool_use_id, question.wait_ms) == ("t1", 200)
    result = messages[-1]
    assert isinstance(result, TerminalError)
    assert (result.code, result.stop_reason) == (ErrorCode.SUSPENDED, StopReason.SUSPENDED)


async def test_without_elicit_a_gated_call_is_refused_without_asking(
    agent: StartAgent, caller: MemoryTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(
        app_tools, (calls(call("t1", "stream_rm", {"stream": "ORDERS"})), answer("could not"))
    )

    messages = await exchange(caller, prompt("remove ORDERS"))

    assert not any(isinstance(m, ElicitRequestApprove) for m in messages)
    assert isinstance(messages[-1], TerminalResult) and messages[-1].text == "could not"


async def test_a_cancel_parks_the_run_and_it_ends_suspended(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    held = Held()
    await agent((FakeTool("slow", held),), (calls(call("t1", "slow")), answer("never sent")))
    running = asyncio.create_task(ask(caller, IDENTITY, "go", request_timeout=WAIT, request="r1"))
    await held.started.wait()

    cancel = new_request(Cancel, sender=CALLER, request="r1", reason="enough")
    acknowledged = decode(
        await caller.request(cancel_subject(IDENTITY, "r1"), encode(cancel), timeout=WAIT),
        direction=Direction.TO_CALLER,
    )
    held.release.set()
    result = await running

    assert isinstance(acknowledged, Ack) and acknowledged.accepted
    assert isinstance(result, TerminalError) and result.code == ErrorCode.SUSPENDED
    assert result.usage is not None and result.usage.llm_calls == 1


@dataclass
class CancelingPrompter:
    """Cancels the turn while its question is on screen, then answers it anyway."""

    transport: Transport
    request: str

    def can_prompt(self) -> bool:
        return True

    async def ask(self, question: Question) -> Answer:
        cancel = new_request(Cancel, sender=CALLER, request=self.request)
        await self.transport.request(
            cancel_subject(IDENTITY, self.request), encode(cancel), timeout=WAIT
        )
        return ApprovalChoice.ONCE


async def test_a_cancel_gives_up_the_question_in_flight(
    agent: StartAgent, caller: MemoryTransport, app_tools: tuple[Tool, ...]
) -> None:
    await agent(app_tools, (calls(call("t1", "stream_rm", {"stream": "ORDERS"})),), elicit=True)
    prompter = CancelingPrompter(caller, "r2")

    result = await ask(
        caller, IDENTITY, "remove", request_timeout=WAIT, request="r2", prompter=prompter
    )

    assert isinstance(result, TerminalError) and result.code == ErrorCode.SUSPENDED


async def test_a_resume_finishes_a_canceled_run(agent: StartAgent, caller: MemoryTransport) -> None:
    held = Held()
    await agent((FakeTool("slow", held),), (calls(call("t1", "slow")), answer("finished")))
    acks: list[Ack] = []
    running = asyncio.create_task(
        ask(caller, IDENTITY, "go", request_timeout=WAIT, request="r3", on_ack=acks.append)
    )
    await held.started.wait()
    cancel = new_request(Cancel, sender=CALLER, request="r3")
    await caller.request(cancel_subject(IDENTITY, "r3"), encode(cancel), timeout=WAIT)
    held.release.set()
    await running
    resume = new_request(
        RequestResume, sender=CALLER, conversation_token=acks[0].conversation_token
    )

    *_, result = await exchange(caller, resume)

    assert isinstance(result, TerminalResult) and result.text == "finished"


async def test_a_waiting_for_a_question_nobody_asked_is_answered_404(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    held = Held()
    await agent((FakeTool("slow", held),), (calls(call("t1", "slow")), answer("done")), elicit=True)
    running = asyncio.create_task(ask(caller, IDENTITY, "go", request_timeout=WAIT, request="r4"))
    await held.started.wait()
    waiting = new_request(ElicitWaiting, sender=CALLER, request="r4", question_id="nosuch")

    with pytest.raises(RemoteServiceError) as refused:
        await caller.request(elicit_subject(IDENTITY, "r4"), encode(waiting), timeout=WAIT)
    held.release.set()
    await running

    assert refused.value.service_code == 404


async def test_closing_the_engine_answers_the_running_turn_failed(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    held = Held()
    started = await agent((FakeTool("slow", held),), (calls(call("t1", "slow")),))
    running = asyncio.create_task(ask(caller, IDENTITY, "go", request_timeout=WAIT))
    await held.started.wait()

    await started.server.close()
    result = await running

    assert isinstance(result, TerminalError) and result.code == ErrorCode.FAILED


async def test_a_follow_up_turn_continues_the_conversation_by_token(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    started = await agent(replies=(answer("three streams"), answer("ORDERS")))
    acks: list[Ack] = []

    await ask(caller, IDENTITY, "how many streams", request_timeout=WAIT, on_ack=acks.append)
    token = acks[0].conversation_token
    result = await ask(caller, IDENTITY, "first one?", request_timeout=WAIT, token=token)

    assert isinstance(result, TerminalResult) and result.text == "ORDERS"
    last_request = started.provider.requests[-1]
    sent = " ".join(
        getattr(block, "text", "") for message in last_request.messages for block in message.content
    )
    assert "how many streams" in sent and "three streams" in sent
    assert result.usage is not None and result.usage.llm_calls == 2


async def test_a_second_turn_while_one_runs_is_refused_as_busy(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    held = Held()
    await agent((FakeTool("slow", held),), (calls(call("t1", "slow")), answer("done")))
    acks: list[Ack] = []
    first = asyncio.create_task(
        ask(caller, IDENTITY, "go", request_timeout=WAIT, on_ack=acks.append)
    )
    await held.started.wait()

    second = await ask(
        caller, IDENTITY, "again", request_timeout=WAIT, token=acks[0].conversation_token
    )
    held.release.set()
    await first

    assert isinstance(second, TerminalError) and second.code == ErrorCode.CONVERSATION_BUSY


async def test_a_prompt_with_every_worker_busy_is_refused_for_capacity(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    held = Held()
    await agent((FakeTool("slow", held),), (calls(call("t1", "slow")), answer("done")), workers=1)
    first = asyncio.create_task(ask(caller, IDENTITY, "go", request_timeout=WAIT))
    await held.started.wait()

    messages = await exchange(caller, prompt("another"))
    held.release.set()
    await first

    ack, refusal = messages
    assert isinstance(ack, Ack) and not ack.accepted
    assert isinstance(refusal, TerminalError) and refusal.code == ErrorCode.CAPACITY


async def test_an_unknown_token_is_refused_as_an_unknown_conversation(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    await agent()

    result = await ask(caller, IDENTITY, "hi", request_timeout=WAIT, token="nosuchtoken")

    assert isinstance(result, TerminalError) and result.code == ErrorCode.UNKNOWN_CONVERSATION


@pytest.mark.parametrize(
    "data",
    [
        b"{not json",
        b"x" * (800 * 1024),
        json.dumps({**json.loads(encode(prompt())), "prompt": ""}).encode(),
    ],
    ids=["malformed", "oversized", "invalid"],
)
async def test_a_bad_request_is_answered_400_and_the_engine_keeps_serving(
    agent: StartAgent, caller: MemoryTransport, data: bytes
) -> None:
    await agent(replies=(answer("still here"),))

    with pytest.raises(RemoteServiceError) as refused:
        await caller.request(task_subject(IDENTITY), data, timeout=WAIT)
    result = await ask(caller, IDENTITY, "hi", request_timeout=WAIT)

    assert refused.value.service_code == 400
    assert isinstance(result, TerminalResult) and result.text == "still here"


async def test_a_message_of_another_protocol_is_answered_400(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    await agent()
    tool_call = new_request(ToolRequest, sender=CALLER, name="status")

    with pytest.raises(RemoteServiceError) as refused:
        await caller.request(task_subject(IDENTITY), encode(tool_call), timeout=WAIT)

    assert refused.value.service_code == 400


async def test_a_quiet_run_sends_keepalive_statuses(
    agent: StartAgent, caller: MemoryTransport
) -> None:
    held = Held()
    await agent(
        (FakeTool("slow", held),),
        (calls(call("t1", "slow")), answer("done")),
        keepalive_interval=timedelta(milliseconds=20),
    )
    kept_alive = asyncio.Event()

    def watch(event: EventMessage | UnknownEvent) -> None:
        if isinstance(event, EventStatus) and event.block.phase == KEEPALIVE_PHASE:
            kept_alive.set()
            held.release.set()

    result = await ask(caller, IDENTITY, "go", request_timeout=WAIT, on_event=watch)

    assert kept_alive.is_set()
    assert isinstance(result, TerminalResult) and result.text == "done"


@pytest.mark.skipif(locate_server_binary() is None, reason="no nats-server binary on this machine")
async def test_a_prompt_round_trip_over_nats(agent: StartAgent) -> None:
    async with EmbeddedBroker() as broker:
        serving = NatsTransport(await broker.connect(name="server"))
        calling = NatsTransport(await broker.connect(name="caller"))
        started = await agent(replies=(answer("over the wire"),), transport=serving)
        try:
            result = await ask(calling, IDENTITY, "hi", request_timeout=WAIT)
        finally:
            await started.server.close()
            for transport in (calling, serving):
                await transport.close()
                await transport.client.close()

    assert isinstance(result, TerminalResult) and result.text == "over the wire"
