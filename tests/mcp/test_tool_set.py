"""A run's tool set with MCP sessions: built once from shared sessions, rebuilt when a server
changes its list, and a collision at the start fails naming both tools."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fisk_ai import config
from fisk_ai.agent.application import ApplicationTools, live_tool_set
from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.mcp.sessions import open_mcp_sessions
from fisk_ai.tools.toolset import ToolCollisionError
from tests.mcp.conftest import stdio_entry

NO_APPLICATION = ApplicationTools(application=None, gates={}, warnings=())


def agent_config(tmp_path: Path) -> config.Config:
    path = tmp_path / "agent.yaml"
    path.write_text("identity: t\nsystem_prompt: hi\nllm:\n  model: m\n")
    return config.load(str(path), config.Mode.LENIENT)


async def test_the_set_follows_a_list_change(tmp_path: Path) -> None:
    cfg = agent_config(tmp_path)
    async with open_mcp_sessions([stdio_entry()]) as sessions:
        tools = live_tool_set(cfg, NO_APPLICATION, mcp=sessions)
        assert callable(tools)
        first = tools()
        assert "echo_late" not in first
        assert tools() is first
        grow = first.get("echo_grow")
        assert grow is not None
        before = sessions.generation
        await grow.execute("", ExecDeps())
        await asyncio.wait_for(sessions.wait_past(before), 20)
        assert "echo_late" in tools()
        assert tools().source_of("echo_late") == 'mcp_clients "echo"'


async def test_two_servers_colliding_at_the_start_fail_naming_both(tmp_path: Path) -> None:
    cfg = agent_config(tmp_path)
    # agent.yaml refuses two entries sharing an alias; built directly, they reach the run's
    # own check, which must still name both.
    entries = [stdio_entry("one", alias="same"), stdio_entry("two", alias="same")]
    async with open_mcp_sessions(entries) as sessions:
        with pytest.raises(ToolCollisionError, match='mcp_clients "two"'):
            live_tool_set(cfg, NO_APPLICATION, mcp=sessions)
