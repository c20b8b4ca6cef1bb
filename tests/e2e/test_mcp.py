"""MCP both ways as a user runs it: `fisk run --no-tui` whose model calls a tool imported from
an MCP server (the SDK-written echo server over stdio, the model being the fake Messages API),
`fisk info`'s MCP clients section, and `fisk mcp` serving commands to the SDK's own client
until an interrupt drains it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.agent_runs import fisk, fisk_environment, start_fisk_mcp, tool_results, write_config
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import application, command, write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.mcp.conftest import ECHO_SERVER
from tests.patience import DEADLINE

SECRET = "mcp-secret-token-0123456789"
ANSWER = "Two and three make five."


def mcp_clients_block(*, down_port: int | None = None) -> str:
    lines = [
        "mcp_clients:",
        "  - name: echo",
        f"    command: {sys.executable}",
        "    args:",
        f"      - {ECHO_SERVER}",
        "    include:",
        "      tools: ['^add$', '^echo$']",
    ]
    if down_port is not None:
        lines += [
            "  - name: docs",
            f"    url: http://127.0.0.1:{down_port}/mcp?key=${{FISK_TEST_MCP_TOKEN}}",
            "    headers:",
            "      Authorization: Bearer ${FISK_TEST_MCP_TOKEN}",
            "    timeout: 5s",
        ]
    return "\n".join(lines) + "\n"


def test_the_model_calls_an_imported_mcp_tool(tmp_path: Path) -> None:
    config = write_config(tmp_path, extra=mcp_clients_block())
    turns = [
        reply(tool_use("tu_add", "echo_add", {"a": 2, "b": 3}), stop_reason="tool_use"),
        reply(text(ANSWER)),
    ]
    with FakeMessagesAPI(turns) as api:
        result = fisk(
            "run",
            "--no-tui",
            "--config",
            str(config),
            "add two and three",
            cwd=tmp_path,
            env=fisk_environment(tmp_path, api),
        )
        requests = list(api.requests)
    assert result.returncode == 0, result.stderr
    assert ANSWER in result.stdout
    offered = {tool["name"] for tool in requests[0]["tools"]}
    assert {"echo_add", "echo_echo"} <= offered
    assert "echo_die" not in offered
    assert tool_results(requests[1])["tu_add"] in ("5", [{"type": "text", "text": "5"}])


def test_a_run_with_an_unreachable_server_fails_at_startup_naming_it(tmp_path: Path) -> None:
    config = write_config(tmp_path, extra=mcp_clients_block(down_port=9))
    with FakeMessagesAPI([reply(text(ANSWER))]) as api:
        result = fisk(
            "run",
            "--no-tui",
            "--config",
            str(config),
            "hello",
            cwd=tmp_path,
            env=fisk_environment(tmp_path, api, {"FISK_TEST_MCP_TOKEN": SECRET}),
        )
        assert api.requests == []
    assert result.returncode == 1
    assert 'MCP server "docs"' in result.stderr
    assert SECRET not in result.stdout + result.stderr


def test_info_reports_each_server_and_a_down_one_without_its_secret(tmp_path: Path) -> None:
    config = write_config(tmp_path, extra=mcp_clients_block(down_port=9))
    result = fisk(
        "info",
        "--config",
        str(config),
        "--no-color",
        cwd=tmp_path,
        env=fisk_environment(tmp_path, extra={"FISK_TEST_MCP_TOKEN": SECRET}),
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "MCP clients:" in out
    assert f"echo: stdio {sys.executable} {ECHO_SERVER}" in out
    assert "imported: echo_echo, echo_add" in out
    assert "left out: die (the entry's include or exclude leaves it out)" in out
    assert "docs: streamable HTTP http://127.0.0.1:9/mcp?key=REDACTED" in out
    assert "unavailable:" in out
    assert SECRET not in out + result.stderr
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("echo_add")]
    assert rows and rows[0][1] == "echo"


def test_fisk_help_does_not_import_the_mcp_sdk() -> None:
    probe = (
        "import sys\n"
        "from fisk_ai.cli.main import build_parser\n"
        "build_parser()\n"
        "print(sorted(m for m in ('mcp', 'mcp_types', 'uvicorn', 'textual') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_fisk_mcp_refuses_a_configuration_without_the_block(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, application("ops", commands=[command("status", "Health")]))
    config = write_config(tmp_path, application=app)
    result = fisk("mcp", "--config", str(config), cwd=tmp_path, env=fisk_environment(tmp_path))
    assert result.returncode == 1
    assert "no expose.agent.mcp block" in result.stderr


def test_fisk_mcp_serves_lists_calls_and_drains_on_interrupt(tmp_path: Path) -> None:
    app = write_fake_app(
        tmp_path,
        application(
            "ops",
            commands=[
                command("status", "Health", tags=["ai:read_only"]),
                command("restart", "Restart", tags=["ai:confirm"]),
            ],
        ),
    )
    config = write_config(
        tmp_path, application=app, extra="expose:\n  agent:\n    mcp:\n      address: 127.0.0.1\n"
    )
    process, banner = start_fisk_mcp(tmp_path, config)
    try:
        url = banner[-1].split()[-1]
        assert any("restart (ai:confirm)" in line for line in banner)

        async def drive() -> tuple[list[str], str]:
            from mcp import Client

            async with Client(url) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                result = await client.call_tool("status", {})
            return names, json.loads(result.content[0].text)["command"]  # type: ignore[union-attr]

        names, ran = asyncio.run(drive())
        assert names == ["status", "restart"]
        assert ran == "status"
        os.kill(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert "MCP server stopped" in stderr


def test_a_client_configured_as_the_go_docs_write_it_is_served(tmp_path: Path) -> None:
    app = write_fake_app(
        tmp_path, application("ops", commands=[command("status", "Health", tags=["ai:read_only"])])
    )
    config = write_config(
        tmp_path, application=app, extra="expose:\n  agent:\n    mcp:\n      address: 127.0.0.1\n"
    )
    process, banner = start_fisk_mcp(tmp_path, config)
    try:
        url = banner[-1].split()[-1]
        # The Go fisk-ai's docs: `claude mcp add --transport http nats http://127.0.0.1:8080`.
        root = url.removesuffix("/mcp")

        async def drive() -> str:
            from mcp import Client

            async with Client(root) as client:
                result = await client.call_tool("status", {})
            return str(json.loads(result.content[0].text)["command"])  # type: ignore[union-attr]

        ran = asyncio.run(drive())
        os.kill(process.pid, signal.SIGINT)
        process.communicate(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert ran == "status"


@pytest.fixture(autouse=True)
def _no_stray_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FISK_TEST_MCP_TOKEN", raising=False)


def test_every_mcp_key_shows_in_what_fisk_mcp_serves(tmp_path: Path) -> None:
    import socket

    app = write_fake_app(
        tmp_path,
        application(
            "ops",
            commands=[
                command("status", "Health", tags=["ai:read_only"]),
                command("restart", "Restart", tags=["impact:rw", "ai:confirm"]),
                command("purge", "Purge", tags=["impact:rw", "ai:confirm"]),
                command("wipe", "Wipe", tags=["impact:rw", "ai:destructive"]),
                command("debug", "Debug"),
            ],
        ),
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.2", 0))
        port = probe.getsockname()[1]
    config = write_config(
        tmp_path,
        application=app,
        extra=(
            "expose:\n  agent:\n"
            "    tools:\n"
            "      include: {tags: [ai:read_only, impact:rw]}\n"
            "      exclude: {tools: ['^restart$'], tags: [ai:destructive]}\n"
            "    mcp:\n"
            f"      port: {port}\n"
            "      address: 127.0.0.2\n"
            "      instructions: Count before you order.\n"
            "      confirm_over_mcp: never\n"
            "      max_concurrent_tools: 3\n"
            "      tool_timeout: 7s\n"
        ),
    )
    process = subprocess.Popen(
        [str(FISK), "mcp", "--config", str(config)],
        cwd=tmp_path,
        env=fisk_environment(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        banner: list[str] = []
        for line in process.stdout:
            banner.append(line.strip())
            if line.startswith("    claude mcp add"):
                break
        url = banner[-1].split()[-1]

        async def drive() -> tuple[str | None, list[str]]:
            from mcp import Client

            async with Client(url) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                return client.instructions, names

        instructions, names = asyncio.run(drive())
        os.kill(process.pid, signal.SIGINT)
        process.communicate(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert url == f"http://127.0.0.2:{port}/mcp"
    assert "Concurrency: 3" in banner
    assert "Tool Timeout: 7s" in banner
    assert "they run without asking; approval is the client's (confirm_over_mcp: never)" in (
        " ".join(banner)
    )
    assert instructions == "Count before you order."
    assert names == ["status", "purge"]
