"""Collisions are found by counting the names the model would see, whatever produced them
(architecture, "Collisions"): two tools of one name in one server's listing keep the first, and
the count and the warning say the other was left out; two servers whose aliases and tool names
meet in one final name fail the start naming both."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from fisk_ai import config
from fisk_ai.agent.application import ApplicationTools, live_tool_set
from fisk_ai.lineui.info import mcp_server_lines
from fisk_ai.tools.mcp.sessions import discover_mcp_servers, open_mcp_sessions
from fisk_ai.tools.toolset import ToolCollisionError
from tests.mcp.conftest import RAW_SERVER

NO_APPLICATION = ApplicationTools(application=None, gates={}, warnings=())
FIRST = {"name": "t", "description": "The first t.", "inputSchema": {"type": "object"}}
SECOND = {"name": "t", "description": "The second t.", "inputSchema": {"type": "object"}}
LEFT_OUT = "the server lists another tool of the same name first"


def raw_server(name: str, alias: str, *tools: dict[str, Any]) -> config.McpClient:
    return config.McpClient.model_validate(
        {
            "name": name,
            "alias": alias,
            "command": sys.executable,
            "args": [str(RAW_SERVER)],
            "env": {"RAW_TOOLS": json.dumps(list(tools))},
        }
    )


def agent_config(tmp_path: Path) -> config.Config:
    path = tmp_path / "agent.yaml"
    path.write_text("identity: t\nsystem_prompt: hi\nllm:\n  model: m\n")
    return config.load(str(path), config.Mode.LENIENT)


async def test_a_run_keeps_the_first_of_two_tools_of_one_name_and_warns_of_the_second() -> None:
    warned: list[str] = []
    async with open_mcp_sessions(
        [raw_server("raw", "raw", FIRST, SECOND)], warn=warned.append
    ) as sessions:
        kept = [(tool.name, tool.description) for tool in sessions.tools]

    assert kept == [("raw_t", "The first t.")]
    assert warned == [f'MCP server "raw" lists the tool "t", left out since {LEFT_OUT}']


async def test_fisk_info_counts_both_tools_of_one_name_and_keeps_one() -> None:
    (report,) = await discover_mcp_servers([raw_server("raw", "raw", FIRST, SECOND)])

    lines = mcp_server_lines([report])
    assert lines[1].endswith("; 2 tools advertised, 1 kept")
    assert lines[2:] == ("  imported: raw_t", f"  left out: t ({LEFT_OUT})")


async def test_two_servers_meeting_in_one_final_name_fail_the_start_naming_both(
    tmp_path: Path,
) -> None:
    # "a_b" + "c" and "a" + "b_c" are both a_b_c: distinct aliases, one name for the model.
    tool_c = {"name": "c", "description": "C.", "inputSchema": {"type": "object"}}
    tool_b_c = {"name": "b_c", "description": "B c.", "inputSchema": {"type": "object"}}
    entries = [raw_server("left", "a_b", tool_c), raw_server("right", "a", tool_b_c)]
    async with open_mcp_sessions(entries) as sessions:
        with pytest.raises(ToolCollisionError) as collided:
            live_tool_set(agent_config(tmp_path), NO_APPLICATION, mcp=sessions)

    message = str(collided.value)
    assert "a_b_c" in message
    assert 'mcp_clients "left"' in message
    assert 'mcp_clients "right"' in message
