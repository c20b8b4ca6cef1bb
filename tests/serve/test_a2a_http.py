"""`fisk serve` answering Google's A2A 1.0 over HTTP, as an A2A agent reaches it: the installed
command against an embedded nats-server and the fake Messages API, wrapping a fake fisk
application, with the a2a-sdk's own card resolver and client on the other end.

The tests that only talk to the endpoint share one `fisk serve` of the default configuration
(``served``), each in its own conversation with its own scripted model turns (``model``); the
tests that configure, interrupt or refuse a server start their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from a2a.client import A2ACardResolver, Client, ClientConfig, create_client
from a2a.helpers.proto_helpers import get_artifact_text, get_message_text, new_text_message
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)

from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from tests.e2e.agent_runs import fisk_environment
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import application, command, write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, ScriptWindow, reply, text, tool_use
from tests.patience import DEADLINE

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
    # The shared server's pipes belong to the loop it started on.
    pytest.mark.asyncio(loop_scope="module"),
]

shares_the_server = pytest.mark.xdist_group("a2a_http_shared_serve")
"""Keeps the tests of the shared server on one worker, so they start it once."""

IDENTITY = "ops-agent"
MODEL = "claude-test-1"
TOKEN_VARIABLE = "OPS_A2A_TOKEN"
TOKEN = "s3cret-a2a-token"


@dataclass(frozen=True)
class Setup:
    tmp_path: Path
    broker: EmbeddedBroker
    api: FakeMessagesAPI
    application: Path
    environment: dict[str, str]

    def config(self, http_block: str = "", *, elicit: bool = True) -> Path:
        path = self.tmp_path / "agent.yaml"
        path.write_text(
            f"identity: {IDENTITY}\n"
            f"application_path: {self.application}\n"
            "nats_context: test\n"
            "system_prompt: You look after a small fleet.\n"
            "llm:\n"
            f"  model: {MODEL}\n"
            "expose:\n"
            "  agent:\n"
            "    a2a:\n"
            "      prompts:\n"
            "        workers: 2\n"
            f"        elicit: {str(elicit).lower()}\n"
            "    a2a_http:\n"
            "      port: 0\n" + http_block
        )
        return path


@contextlib.asynccontextmanager
async def hosting(tmp_path: Path) -> AsyncIterator[Setup]:
    """A broker, a fake model and the ops application under ``tmp_path``."""
    model = application(
        "ops",
        commands=[
            command("status", "Show fleet status", tags=["ai:read_only"]),
            command("drain", "Drain a node", tags=["ai:confirm"]),
        ],
    )
    app = write_fake_app(tmp_path, model, name="ops")
    async with EmbeddedBroker() as broker:
        contexts = tmp_path / "xdg" / "nats" / "context"
        contexts.mkdir(parents=True)
        (contexts / "test.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
        with FakeMessagesAPI() as api:
            environment = fisk_environment(
                tmp_path,
                api,
                extra={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), TOKEN_VARIABLE: TOKEN},
            )
            yield Setup(tmp_path, broker, api, app, environment)


@pytest_asyncio.fixture(loop_scope="module")
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    async with hosting(tmp_path) as own:
        yield own


@dataclass
class Served:
    process: asyncio.subprocess.Process
    banner: list[str]
    url: str


async def start_serve(setup: Setup, config: Path) -> Served:
    process = await asyncio.create_subprocess_exec(
        str(FISK),
        "serve",
        "--config",
        str(config),
        "--work-dir",
        str(setup.tmp_path),
        "--state-dir",
        str(setup.tmp_path / "sessions"),
        env=setup.environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    lines: list[str] = []
    while not lines or not lines[-1].lstrip().startswith("Auth:"):
        line = await asyncio.wait_for(process.stdout.readline(), DEADLINE)
        if not line:
            assert process.stderr is not None
            raise AssertionError((await process.stderr.read()).decode())
        lines.append(line.decode().rstrip("\n"))
    url = next(line.split(": ", 1)[1] for line in lines if line.lstrip().startswith("Listening:"))
    return Served(process, lines, url)


@dataclass
class Shared:
    setup: Setup
    served: Served


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Shared]:
    """One `fisk serve` of the default configuration for the tests that do not change it."""
    async with hosting(tmp_path_factory.mktemp("a2a_http")) as own:
        running = await start_serve(own, own.config())
        assert running.process.stderr is not None
        # Read what it logs over the module's tests, so a full pipe never stalls it.
        logged = asyncio.create_task(running.process.stderr.read())
        try:
            yield Shared(own, running)
        finally:
            if running.process.returncode is None:
                running.process.kill()
                await running.process.wait()
            await logged


@pytest.fixture
def served(shared: Shared) -> Served:
    assert shared.served.process.returncode is None, "the shared server has exited"
    return shared.served


@pytest.fixture
def model(shared: Shared) -> Iterator[ScriptWindow]:
    """This test's turns of the shared server's model; every one taken by the end."""
    window = shared.setup.api.window()
    yield window
    window.close()


@pytest_asyncio.fixture(loop_scope="module")
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=DEADLINE) as client:
        yield client


async def card_of(http: httpx.AsyncClient, served: Served) -> AgentCard:
    return await A2ACardResolver(http, served.url).get_agent_card()


async def client_of(http: httpx.AsyncClient, served: Served, *, streaming: bool = False) -> Client:
    card = await card_of(http, served)
    return await create_client(card, ClientConfig(httpx_client=http, streaming=streaming))


def user_message(words: str, *, context_id: str = "", task_id: str = "") -> SendMessageRequest:
    message = new_text_message(words, context_id=context_id or None, task_id=task_id or None)
    message.role = Role.ROLE_USER
    return SendMessageRequest(message=message)


async def send(client: Client, request: SendMessageRequest) -> Task:
    """The task a non-streaming send answers with."""
    responses = [response async for response in client.send_message(request)]
    assert len(responses) == 1, responses
    assert responses[0].HasField("task"), responses[0]
    return responses[0].task


def answer_of(task: Task) -> str:
    return "".join(get_artifact_text(artifact) for artifact in task.artifacts)


@shares_the_server
async def test_the_card_names_the_agent_its_commands_and_the_url_it_answers_at(
    http: httpx.AsyncClient, served: Served
) -> None:
    card = await card_of(http, served)

    assert card.name == IDENTITY
    assert [skill.id for skill in card.skills] == ["status", "drain"]
    assert card.capabilities.streaming
    assert [interface.url for interface in card.supported_interfaces] == [served.url]
    assert [interface.protocol_binding for interface in card.supported_interfaces] == ["JSONRPC"]


@shares_the_server
async def test_the_banner_lists_the_endpoint_it_started(served: Served) -> None:
    assert served.banner[2:5] == [
        "         Endpoints: a2a/prompts",
        "                    a2a",
        "                    a2a/http",
    ]
    section = served.banner[served.banner.index("  Answering A2A 1.0 over HTTP:") :]
    assert [line.split(":", 1)[0].strip() for line in section[2:]] == [
        "Listening",
        "URL",
        "Agent Card",
        "Auth",
    ]
    assert section[-1].endswith("Auth: none")


@shares_the_server
async def test_a_message_is_answered_by_a_turn_of_the_agent(
    model: ScriptWindow, http: httpx.AsyncClient, served: Served
) -> None:
    model.script(
        [
            reply(tool_use("tu_1", "status", {}), stop_reason="tool_use"),
            reply(text("the fleet is green")),
        ]
    )
    client = await client_of(http, served)

    task = await send(client, user_message("how is the fleet"))

    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer_of(task) == "the fleet is green"
    assert model.requests[0]["messages"][0]["content"][0]["text"] == "how is the fleet"


@shares_the_server
async def test_a_follow_up_in_the_same_context_continues_the_conversation(
    model: ScriptWindow, http: httpx.AsyncClient, served: Served
) -> None:
    model.script([reply(text("the fleet is green")), reply(text("it was green"))])
    client = await client_of(http, served)
    first = await send(client, user_message("how is the fleet"))

    second = await send(client, user_message("and a moment ago", context_id=first.context_id))

    assert second.context_id == first.context_id
    assert answer_of(second) == "it was green"
    sent = json.dumps(model.requests[-1]["messages"])
    assert "how is the fleet" in sent
    assert "the fleet is green" in sent


@shares_the_server
async def test_a_new_context_starts_a_new_conversation(
    model: ScriptWindow, http: httpx.AsyncClient, served: Served
) -> None:
    model.script([reply(text("the fleet is green")), reply(text("hello"))])
    client = await client_of(http, served)
    first = await send(client, user_message("how is the fleet"))

    second = await send(client, user_message("hello"))

    assert second.context_id != first.context_id
    assert "how is the fleet" not in json.dumps(model.requests[-1]["messages"])


@shares_the_server
async def test_streaming_yields_the_answer_before_the_turn_ends(
    model: ScriptWindow, http: httpx.AsyncClient, served: Served
) -> None:
    model.script([reply(text("the fleet is green and every node answers"), chunk=8)])
    held = model.pause(1, after=5)
    client = await client_of(http, served, streaming=True)
    pieces: list[str] = []
    states: list[int] = []

    async for response in client.send_message(user_message("how is the fleet")):
        if response.HasField("artifact_update"):
            pieces.append(get_artifact_text(response.artifact_update.artifact))
            held.set()  # the rest of the answer is written only once a piece arrived
        if response.HasField("status_update"):
            states.append(response.status_update.status.state)

    assert pieces[0]
    assert "the fleet is green and every node answers".startswith(pieces[0])
    assert pieces[-1] == "the fleet is green and every node answers"
    assert states[-1] == TaskState.TASK_STATE_COMPLETED


@shares_the_server
async def test_a_gated_command_asks_the_caller_and_runs_on_its_answer(
    model: ScriptWindow, http: httpx.AsyncClient, served: Served
) -> None:
    model.script(
        [
            reply(tool_use("tu_1", "drain", {}), stop_reason="tool_use"),
            reply(text("node drained")),
        ]
    )
    client = await client_of(http, served)
    asked = await send(client, user_message("drain the node"))
    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "Approve running drain" in get_message_text(asked.status.message)

    answered = await send(
        client, user_message("once", context_id=asked.context_id, task_id=asked.id)
    )

    assert answered.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer_of(answered) == "node drained"
    result = model.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert "declined" not in json.dumps(result)


@shares_the_server
async def test_a_no_declines_the_gated_command(
    model: ScriptWindow, http: httpx.AsyncClient, served: Served
) -> None:
    model.script(
        [
            reply(tool_use("tu_1", "drain", {}), stop_reason="tool_use"),
            reply(text("left it alone")),
        ]
    )
    client = await client_of(http, served)
    asked = await send(client, user_message("drain the node"))

    answered = await send(
        client,
        user_message(
            "no, not during business hours", context_id=asked.context_id, task_id=asked.id
        ),
    )

    assert answer_of(answered) == "left it alone"
    result = json.dumps(model.requests[1]["messages"][-1]["content"][0])
    assert "declined" in result
    assert "not during business hours" in result


async def test_without_elicit_a_gated_command_is_declined_and_the_task_never_waits(
    setup: Setup, http: httpx.AsyncClient
) -> None:
    setup.api.script(
        [
            reply(tool_use("tu_1", "drain", {}), stop_reason="tool_use"),
            reply(text("nobody could approve it")),
        ]
    )
    running = await start_serve(setup, setup.config(elicit=False))
    try:
        client = await create_client(
            await card_of(http, running), ClientConfig(httpx_client=http, streaming=False)
        )
        task = await send(client, user_message("drain the node"))
    finally:
        running.process.kill()
        await running.process.wait()

    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer_of(task) == "nobody could approve it"
    refusal = json.loads(setup.api.requests[1]["messages"][-1]["content"][0]["content"])
    assert refusal["allowed"] is False


@shares_the_server
async def test_a_message_without_text_is_rejected_before_anything_runs(
    model: ScriptWindow, http: httpx.AsyncClient, served: Served
) -> None:
    client = await client_of(http, served)
    request = user_message("placeholder")
    request.message.ClearField("parts")
    request.message.parts.add().url = "https://example.test/report.pdf"

    task = await send(client, request)

    assert task.status.state == TaskState.TASK_STATE_REJECTED
    assert "no text" in get_message_text(task.status.message)
    assert model.requests == []


@shares_the_server
async def test_cancel_ends_a_running_task_canceled(
    model: ScriptWindow, http: httpx.AsyncClient, served: Served
) -> None:
    model.script([reply(text("too late"))])
    held = model.hold(1)
    client = await client_of(http, served, streaming=True)
    started: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def listen() -> None:
        async for response in client.send_message(user_message("how is the fleet")):
            if not started.done():
                update = response.status_update
                started.set_result(
                    response.task.id if response.HasField("task") else update.task_id
                )

    listening = asyncio.create_task(listen())
    try:
        task_id = await asyncio.wait_for(started, DEADLINE)
        # The turn is mid model call, the fake holding its answer, when the cancel arrives.
        await model.until_arrived(1)

        canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
    finally:
        held.set()
    await asyncio.wait_for(listening, DEADLINE)

    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    fetched = await client.get_task(GetTaskRequest(id=task_id))
    assert fetched.status.state == TaskState.TASK_STATE_CANCELED


@shares_the_server
async def test_tasks_get_reads_a_finished_task(
    model: ScriptWindow, http: httpx.AsyncClient, served: Served
) -> None:
    model.script([reply(text("the fleet is green"))])
    client = await client_of(http, served)
    task = await send(client, user_message("how is the fleet"))

    fetched = await client.get_task(GetTaskRequest(id=task.id))

    assert fetched.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer_of(fetched) == "the fleet is green"


async def test_with_a_token_a_call_without_it_is_refused_and_the_card_says_so(
    setup: Setup, http: httpx.AsyncClient
) -> None:
    running = await start_serve(setup, setup.config(f"      token_env: {TOKEN_VARIABLE}\n"))
    try:
        card = await card_of(http, running)
        refused = await http.post(
            running.url, json={"jsonrpc": "2.0", "id": 1, "method": "GetTask"}
        )
        setup.api.script([reply(text("the fleet is green"))])
        authorized = httpx.AsyncClient(
            timeout=DEADLINE, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        async with authorized:
            client = await create_client(
                card, ClientConfig(httpx_client=authorized, streaming=False)
            )
            task = await send(client, user_message("how is the fleet"))
    finally:
        running.process.kill()
        await running.process.wait()

    assert refused.status_code == 401
    assert list(card.security_schemes) == ["bearer"]
    assert answer_of(task) == "the fleet is green"
    assert running.banner[-1].endswith(f"Auth: bearer token from {TOKEN_VARIABLE}")


def run_serve(setup: Setup, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(FISK), "serve", "--config", str(config)],
        env=setup.environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )


async def test_a_misspelled_key_is_refused_in_one_sentence_naming_it(setup: Setup) -> None:
    done = run_serve(setup, setup.config("      public_ulr: https://ops.example.com/\n"))

    assert done.returncode != 0
    assert "public_ulr" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


async def test_a_token_in_clear_text_off_loopback_is_refused(setup: Setup) -> None:
    done = run_serve(
        setup,
        setup.config(f"      address: 0.0.0.0\n      token_env: {TOKEN_VARIABLE}\n"),
    )

    assert done.returncode != 0
    assert "plaintext_token" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


async def test_without_the_prompts_channel_the_endpoint_is_refused(setup: Setup) -> None:
    config = setup.config()
    config.write_text(
        config.read_text().replace(
            "      prompts:\n        workers: 2\n        elicit: true\n",
            "      serve_tools: true\n",
        )
    )

    done = run_serve(setup, config)

    assert done.returncode != 0
    assert "expose.agent.a2a.prompts" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@shares_the_server
async def test_a_0_3_caller_is_answered_on_message_send(
    model: ScriptWindow, http: httpx.AsyncClient, served: Served
) -> None:
    model.script([reply(text("the fleet is green"))])
    message = {
        "kind": "message",
        "role": "user",
        "messageId": "m-1",
        "parts": [{"kind": "text", "text": "how is the fleet"}],
    }

    response = await http.post(
        served.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}},
    )

    task = response.json()["result"]
    fetched = await http.post(
        served.url,
        json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task["id"]}},
    )

    assert task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"][0]["text"] == "the fleet is green"
    assert fetched.json()["result"]["status"]["state"] == "completed"


async def test_without_a_token_off_loopback_the_operator_is_warned(setup: Setup) -> None:
    running = await start_serve(setup, setup.config("      address: 0.0.0.0\n"))
    try:
        assert running.process.stderr is not None
        line = await asyncio.wait_for(running.process.stderr.readline(), DEADLINE)
    finally:
        running.process.kill()
        await running.process.wait()

    assert "listens on 0.0.0.0 without a token" in line.decode()
    assert "expose.agent.a2a_http.token_env" in line.decode()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_the_endpoint_listens_on_the_port_set(setup: Setup) -> None:
    port = free_port()
    config = setup.config()
    config.write_text(config.read_text().replace("      port: 0\n", f"      port: {port}\n"))

    running = await start_serve(setup, config)
    running.process.kill()
    await running.process.wait()

    assert running.url == f"http://127.0.0.1:{port}/"


async def test_the_card_gives_the_public_url(setup: Setup, http: httpx.AsyncClient) -> None:
    public = "https://agents.example.test/ops/"
    running = await start_serve(setup, setup.config(f"      public_url: {public}\n"))
    try:
        card = await card_of(http, running)
    finally:
        running.process.kill()
        await running.process.wait()

    assert [interface.url for interface in card.supported_interfaces] == [public]
    assert f"                 URL: {public}" in running.banner


async def test_plaintext_token_lets_the_token_cross_plain_http_off_loopback(
    setup: Setup, http: httpx.AsyncClient
) -> None:
    running = await start_serve(
        setup,
        setup.config(
            f"      address: 0.0.0.0\n      token_env: {TOKEN_VARIABLE}\n"
            "      plaintext_token: true\n"
        ),
    )
    try:
        card = await card_of(http, running)
    finally:
        running.process.kill()
        await running.process.wait()

    assert list(card.security_schemes) == ["bearer"]


async def test_an_interrupt_drains_and_closes_the_endpoint(
    setup: Setup, http: httpx.AsyncClient
) -> None:
    served = await start_serve(setup, setup.config())
    try:
        setup.api.script([reply(text("the fleet is green"))])
        client = await client_of(http, served)
        await send(client, user_message("how is the fleet"))

        served.process.send_signal(signal.SIGINT)
        await asyncio.wait_for(served.process.communicate(), DEADLINE)
    finally:
        if served.process.returncode is None:
            served.process.kill()
            await served.process.wait()

    assert served.process.returncode == 0
    with pytest.raises(httpx.ConnectError):
        await http.get(served.url)
