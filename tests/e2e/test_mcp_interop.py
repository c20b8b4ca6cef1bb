"""MCP interoperability with what MCP users really run, both from the npm registry: the MCP
Inspector CLI (a handshake-era TypeScript client) drives `fisk mcp`, and fisk-ai's client
imports the reference server-everything over stdio. Both skip with the reason when node is
not installed; npx fetches each package the first time."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from fisk_ai.config.models import McpClient
from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.mcp.sessions import open_mcp_sessions
from tests.e2e.agent_runs import start_fisk_mcp, write_config
from tests.fakes.fiskapp import application, command, write_fake_app
from tests.patience import DEADLINE

pytestmark = [
    pytest.mark.skipif(shutil.which("npx") is None, reason="node (npx) is not installed"),
    pytest.mark.xdist_group("npx"),
]

# 0.15.0 is the newest Inspector that runs on Node 20; later releases need Node 22.
INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
EVERYTHING = "@modelcontextprotocol/server-everything@2025.9.25"
NPX_TIMEOUT = 300


def inspector(url: str, *method: str) -> object:
    result = subprocess.run(
        ["npx", "-y", INSPECTOR, "--cli", url, "--transport", "http", "--method", *method],
        capture_output=True,
        text=True,
        timeout=NPX_TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_inspector_lists_and_calls_fisk_mcp(tmp_path: Path) -> None:
    app = write_fake_app(
        tmp_path,
        application("ops", commands=[command("status", "Health", tags=["ai:read_only"])]),
    )
    config = write_config(
        tmp_path, application=app, extra="expose:\n  agent:\n    mcp:\n      address: 127.0.0.1\n"
    )
    process, banner = start_fisk_mcp(tmp_path, config)
    try:
        url = banner[-1].split()[-1]
        listed = inspector(url, "tools/list")
        assert isinstance(listed, dict)
        assert [tool["name"] for tool in listed["tools"]] == ["status"]
        assert listed["tools"][0]["annotations"]["readOnlyHint"] is True
        called = inspector(url, "tools/call", "--tool-name", "status")
        assert isinstance(called, dict)
        assert json.loads(called["content"][0]["text"])["command"] == "status"
    finally:
        # A server that already ended was reaped above; its reason is the failure to report.
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=DEADLINE)
    assert process.returncode == 0


def test_the_client_imports_server_everything_over_stdio() -> None:
    entry = McpClient.model_validate(
        {
            "name": "everything",
            "alias": "ev",
            "command": "npx",
            "args": ["-y", EVERYTHING, "stdio"],
            "timeout": f"{NPX_TIMEOUT}s",
            "include": {"tools": ["^echo$", "^add$"]},
        }
    )

    async def run() -> tuple[list[str], str]:
        async with open_mcp_sessions([entry]) as sessions:
            names = [tool.name for tool in sessions.tools]
            echo = next(tool for tool in sessions.tools if tool.name == "ev_echo")
            outcome = await echo.execute('{"message": "hi"}', ExecDeps())
        return names, outcome.output

    names, echoed = asyncio.run(run())
    assert names == ["ev_echo", "ev_add"]
    assert echoed == "Echo: hi"
