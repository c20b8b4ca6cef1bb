"""`fisk serve` serving tools and `fisk discover` reading its card, as a user runs them: the
installed command, a NATS context file pointing at an embedded nats-server, a fake application.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from fisk_ai.a2a.client import call_tool
from fisk_ai.a2a.errors import NoResponders
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.tools.builtin.hitl import hitl_tools
from tests.e2e.conftest import FISK, RunFisk
from tests.fakes.fiskapp import sample_model, write_fake_app
from tests.patience import DEADLINE

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

IDENTITY = "ops-tools"
WAIT = DEADLINE


@dataclass(frozen=True)
class Setup:
    broker: EmbeddedBroker
    config: Path
    environment: dict[str, str]


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    async with EmbeddedBroker() as broker:
        contexts = tmp_path / "xdg" / "nats" / "context"
        contexts.mkdir(parents=True)
        (contexts / "test.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
        app = write_fake_app(tmp_path, sample_model(), name="ops")
        config = tmp_path / "tools.yaml"
        config.write_text(
            f"identity: {IDENTITY}\n"
            f"application_path: {app}\n"
            "nats_context: test\n"
            "global_flags: [context]\n"
            "harness:\n"
            "  confirm_tags: [impact:rw]\n"
            "  human_in_the_loop:\n"
            "    enabled: true\n"
            "expose:\n"
            "  agent:\n"
            "    a2a:\n"
            "      serve_tools: true\n"
            "      max_concurrent_tools: 2\n"
        )
        environment = {
            **os.environ,
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
        }
        environment.pop("VERBOSE", None)
        yield Setup(broker, config, environment)


def expected_banner() -> str:
    withheld = [tool.name for tool in hitl_tools()]
    lines = [
        f"Serving {IDENTITY}/1.0.0:",
        "",
        "        Endpoints: a2a",
        "    Agent Context: test",
        "        Telemetry: disabled",
        "",
        "  Serving tools over a2a:",
        "",
        f"          Discovery: choria.fisk-ai.discovery.{IDENTITY}",
        f"              Tools: choria.fisk-ai.tool.{IDENTITY}",
        "        Concurrency: 2",
        "       Tool Timeout: 30s",
        "            Exposed: status",
        "                     stream_ls",
        f"           Withheld: {withheld[0]}",
        *[f"                     {name}" for name in withheld[1:]],
    ]
    return "\n".join(lines) + "\n"


async def test_serve_prints_the_banner_answers_discover_and_drains_on_sigint(
    setup: Setup,
) -> None:
    served = await asyncio.create_subprocess_exec(
        str(FISK),
        "serve",
        "--config",
        str(setup.config),
        env=setup.environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert served.stdout is not None and served.stderr is not None
        banner = expected_banner()
        printed = await asyncio.wait_for(served.stdout.readexactly(len(banner)), WAIT)
        assert printed.decode() == banner

        discovered = await asyncio.create_subprocess_exec(
            str(FISK),
            "discover",
            IDENTITY,
            "--context",
            "test",
            env=setup.environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        card, errors = await asyncio.wait_for(discovered.communicate(), WAIT)
        assert discovered.returncode == 0, errors.decode()
        assert card.decode() == (
            f"Agent Card for {IDENTITY}:\n"
            "\n"
            f"        Agent: {IDENTITY}\n"
            "      Version: 1.0.0\n"
            "    Protocols: io.choria.fisk-ai.v1\n"
            "\n"
            "Tool       Description\n"
            "status     Show fleet status\n"
            "stream_ls  List streams\n"
        )

        served.send_signal(signal.SIGINT)
        _, stderr = await asyncio.wait_for(served.communicate(), WAIT)
        assert served.returncode == 0, stderr.decode()
        assert (
            "draining: the endpoints stop answering. Interrupt again to stop now" in stderr.decode()
        )
    finally:
        if served.returncode is None:
            served.kill()
            await served.wait()


async def test_a_served_call_runs_the_command(setup: Setup) -> None:
    served = await asyncio.create_subprocess_exec(
        str(FISK),
        "serve",
        "--config",
        str(setup.config),
        env=setup.environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    transport = NatsTransport(await setup.broker.connect())
    try:
        assert served.stdout is not None
        await asyncio.wait_for(served.stdout.readexactly(len(expected_banner())), WAIT)

        reply = await call_tool(
            transport, IDENTITY, "status", {"context": "east"}, request_timeout=_seconds(WAIT)
        )

        assert not reply.is_error
        assert json.loads(reply.output)["argv"] == ["status", "--context=east"]
        assert reply.exec is not None and reply.exec.command == "status --context=east"
    finally:
        await transport.close()
        await transport.client.close()
        served.send_signal(signal.SIGTERM)
        await asyncio.wait_for(served.wait(), WAIT)


def _seconds(value: float) -> timedelta:
    return timedelta(seconds=value)


def test_discover_with_nobody_serving_says_the_agent_is_unavailable(
    tmp_path: Path, run_fisk: RunFisk
) -> None:
    async def discover_alone() -> subprocess.CompletedProcess[str]:
        async with EmbeddedBroker() as broker:
            contexts = tmp_path / "xdg" / "nats" / "context"
            contexts.mkdir(parents=True)
            (contexts / "test.json").write_text(
                json.dumps({"url": broker.url, "token": broker.token})
            )
            return await asyncio.to_thread(
                run_fisk,
                "discover",
                "nobody",
                "--context",
                "test",
                env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")},
            )

    result = asyncio.run(discover_alone())

    assert result.returncode == 1
    assert "remote agent unavailable" in result.stderr


async def test_a_fault_on_the_service_drains_and_fails(setup: Setup) -> None:
    from fisk_ai.errors import FiskError
    from fisk_ai.serve.draining import serve_until_stopped
    from fisk_ai.serve.tools import ToolsOptions, ToolsServer

    transport = await NatsTransport.open(
        {"servers": [setup.broker.url], "token": setup.broker.token}, name="fisk-ai test"
    )
    server = ToolsServer(
        transport,
        (),
        ToolsOptions(identity=IDENTITY, version="1.0.0", max_concurrent=1, tool_timeout=None),
    )
    await server.start()
    serving = asyncio.create_task(serve_until_stopped(server, transport))
    assert transport.fault is not None

    transport.fault.set_result("the subscription fell behind")

    with pytest.raises(
        FiskError, match="failed \\(the subscription fell behind\\) and was drained"
    ):
        await serving
    peer = NatsTransport(await setup.broker.connect())
    with pytest.raises(NoResponders):
        await peer.request(f"choria.fisk-ai.discovery.{IDENTITY}", b"{}", timeout=_seconds(WAIT))
    await peer.close()
    await peer.client.close()
    await transport.close()


async def test_the_files_a2a_keys_set_what_the_banner_says_each_endpoint_allows(
    setup: Setup,
) -> None:
    text = setup.config.read_text().replace(
        "      max_concurrent_tools: 2\n",
        "      max_concurrent_tools: 3\n      tool_timeout: 9s\n      prompts: {workers: 3}\n",
    )
    setup.config.write_text(
        text + "system_prompt: You look after the fleet.\nllm:\n  model: claude-test-1\n"
    )
    served = await asyncio.create_subprocess_exec(
        str(FISK),
        "serve",
        "--config",
        str(setup.config),
        # Answering prompts needs a key to start; nothing here asks the model anything.
        env={
            **setup.environment,
            "ANTHROPIC_API_KEY": "sk-ant-never-used",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        },
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    banner: list[str] = []
    try:
        assert served.stdout is not None
        while not banner or not banner[-1].startswith("Exposed:"):
            line = await asyncio.wait_for(served.stdout.readline(), WAIT)
            assert line, "the banner ended early"
            banner.append(line.decode().strip())
    finally:
        if served.returncode is None:
            served.send_signal(signal.SIGINT)
        _, stderr = await asyncio.wait_for(served.communicate(), WAIT)
    assert served.returncode == 0, stderr.decode()

    prompts = banner.index("Answering prompts over a2a:")
    tools = banner.index("Serving tools over a2a:")
    assert "Workers: 3" in banner[prompts:tools]
    assert "Concurrency: 3" in banner[tools:]
    assert "Tool Timeout: 9s" in banner[tools:]


async def _banner_of(served: asyncio.subprocess.Process) -> list[str]:
    """The banner's lines up to the Withheld row's last name, stripped."""
    assert served.stdout is not None
    lines: list[str] = []
    while not lines or lines[-1] != "knowledge_enumerate":
        line = await asyncio.wait_for(served.stdout.readline(), WAIT)
        assert line, "the banner ended early"
        lines.append(line.decode().strip())
    return lines


async def _stopped(served: asyncio.subprocess.Process) -> tuple[int | None, str]:
    if served.returncode is None:
        served.send_signal(signal.SIGINT)
    _, stderr = await asyncio.wait_for(served.communicate(), WAIT)
    return served.returncode, stderr.decode()


@pytest.mark.parametrize("prompts", [False, True], ids=["tools only", "with prompts"])
async def test_serving_tools_with_memory_and_knowledge_on_starts_and_withholds_them(
    setup: Setup, tmp_path: Path, prompts: bool
) -> None:
    harness = (
        "harness:\n"
        "  memory:\n"
        "    enabled: true\n"
        "    options:\n"
        f"      directory: {tmp_path / 'memory'}\n"
        "  knowledge:\n"
        "    enabled: true\n"
        f"    directory: {tmp_path / 'knowledge'}\n"
    )
    text = setup.config.read_text().replace("harness:\n", harness)
    if prompts:
        text = text.replace(
            "      max_concurrent_tools: 2\n", "      max_concurrent_tools: 2\n      prompts: {}\n"
        )
        text += "system_prompt: You look after the fleet.\nllm:\n  model: claude-test-1\n"
    setup.config.write_text(text)
    served = await asyncio.create_subprocess_exec(
        str(FISK),
        "serve",
        "--config",
        str(setup.config),
        env={
            **setup.environment,
            "ANTHROPIC_API_KEY": "sk-ant-never-used",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        },
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        banner = await _banner_of(served)
        transport = NatsTransport(await setup.broker.connect())
        try:
            reply = await call_tool(
                transport, IDENTITY, "status", {"context": "east"}, request_timeout=_seconds(WAIT)
            )
        finally:
            await transport.close()
            await transport.client.close()
    finally:
        returncode, stderr = await _stopped(served)
    assert returncode == 0, stderr
    assert not reply.is_error
    withheld = banner[banner.index(f"Withheld: {hitl_tools()[0].name}") :]
    assert withheld[3:] == [
        "memory_list",
        "memory_read",
        "memory_write",
        "memory_delete",
        "knowledge_search",
        "knowledge_enumerate",
    ]
    assert "Traceback" not in stderr


async def test_a_subscription_the_server_refuses_fails_the_start_without_a_banner(
    setup: Setup, tmp_path: Path
) -> None:
    from tests.fakes.nats_cluster import free_ports

    binary = locate_server_binary()
    assert binary is not None
    (port,) = free_ports(1)
    server_config = tmp_path / "perm.conf"
    server_config.write_text(
        f"listen: 127.0.0.1:{port}\n"
        "authorization { users = [ { user: agent, password: secret, permissions: {\n"
        '  subscribe: { deny: ["choria.fisk-ai.tool.>"] } } } ] }\n'
    )
    server = await asyncio.create_subprocess_exec(
        binary, "-c", str(server_config), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        assert server.stderr is not None
        while b"Server is ready" not in await asyncio.wait_for(server.stderr.readline(), WAIT):
            pass
        contexts = tmp_path / "xdg" / "nats" / "context"
        (contexts / "test.json").write_text(
            json.dumps({"url": f"nats://127.0.0.1:{port}", "user": "agent", "password": "secret"})
        )
        served = await asyncio.create_subprocess_exec(
            str(FISK),
            "serve",
            "--config",
            str(setup.config),
            env=setup.environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        printed, errors = await asyncio.wait_for(served.communicate(), WAIT)
    finally:
        server.terminate()
        await server.wait()

    assert served.returncode == 1
    assert printed == b""
    assert errors.decode().startswith(
        f"fisk: error: the NATS server refused agent {IDENTITY} a subscription ("
    )
    assert "choria.fisk-ai.tool." in errors.decode()
