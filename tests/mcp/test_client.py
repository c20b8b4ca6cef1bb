"""The MCP client: third-party servers' tools imported into a run, over stdio and streamable
HTTP, against a server written with the SDK's own MCPServer."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any

import pytest

from fisk_ai.tools.base import ExecDeps, Outcome
from fisk_ai.tools.mcp.importing import (
    McpTool,
    Redactor,
    import_listing,
    printable_command,
)
from fisk_ai.tools.mcp.sessions import (
    McpServerError,
    McpSessions,
    discover_mcp_servers,
    open_mcp_sessions,
    server_endpoint,
)
from fisk_ai.tools.selection import ToolFilter
from tests.mcp.conftest import http_entry, served_over_http, stdio_entry

SECRET = "s3cr3t-token-value-42"
DEPS = ExecDeps()


class Descriptor:
    def __init__(self, name: str, description: str | None, schema: Any) -> None:
        self.name = name
        self.description = description
        self.input_schema = schema


OBJECT = {"type": "object", "properties": {}}


async def never_called(tool: str, arguments: Any) -> Outcome:
    raise AssertionError("not called")


def tool_named(sessions: McpSessions, name: str) -> McpTool:
    for tool in sessions.tools:
        if tool.name == name:
            return tool
    raise AssertionError(f"no tool {name} in {[tool.name for tool in sessions.tools]}")


def test_every_imported_tool_is_alias_underscore_tool() -> None:
    listing = import_listing(
        "filesystem", "fs", [Descriptor("read", "Read a file.", OBJECT)], never_called
    )
    assert [tool.name for tool in listing.tools] == ["fs_read"]
    assert listing.tools[0].remote_name == "read"


def test_include_and_exclude_select_by_the_servers_own_names() -> None:
    descriptors = [
        Descriptor("read_file", "Read.", OBJECT),
        Descriptor("read_media_file", "Read media.", OBJECT),
        Descriptor("write_file", "Write.", OBJECT),
    ]
    listing = import_listing(
        "filesystem",
        "fs",
        descriptors,
        never_called,
        include=ToolFilter(tools=("^read_",)),
        exclude=ToolFilter(tools=("^read_media_",)),
    )
    assert [tool.name for tool in listing.tools] == ["fs_read_file"]
    assert listing.advertised == 3
    assert {name for name, _ in listing.skipped} == {"read_media_file", "write_file"}


def test_unusable_descriptors_are_left_out_with_a_reason() -> None:
    listing = import_listing(
        "s",
        "s",
        [
            Descriptor("quiet", None, OBJECT),
            Descriptor("array", "An array root.", {"type": "array"}),
            Descriptor("bad name", "Spaces.", OBJECT),
        ],
        never_called,
    )
    reasons = dict(listing.skipped)
    assert listing.tools == ()
    assert "no description" in reasons["quiet"]
    assert "root type is not object" in reasons["array"]
    assert "letters, digits" in reasons["bad name"]


def test_imported_tools_are_never_exposed_or_gated() -> None:
    listing = import_listing("s", "s", [Descriptor("t", "T.", OBJECT)], never_called)
    tool = listing.tools[0]
    assert not tool.mcp_exposable
    assert not tool.a2a_exposable
    assert not hasattr(tool, "confirm_trigger")


def test_redactor_replaces_long_values_longest_first_and_url_structure() -> None:
    redact = Redactor.of(["short", SECRET, SECRET + "-longer"])
    text = redact(f"x {SECRET}-longer y {SECRET} short https://u:p@h:1/p?key=v#frag")
    assert SECRET not in text
    assert "short" in text
    assert "REDACTED y REDACTED" in text
    assert "https://h:1/p?key=REDACTED" in text


def test_a_stdio_command_line_redacts_each_url_argument() -> None:
    line = printable_command("npx", ["-y", "mcp-remote", f"https://host/sse?key={SECRET}"])
    assert line == "npx -y mcp-remote https://host/sse?key=REDACTED"


async def test_stdio_server_tools_are_imported_and_called() -> None:
    async with open_mcp_sessions([stdio_entry()]) as sessions:
        assert "echo_add" in [tool.name for tool in sessions.tools]
        outcome = await tool_named(sessions, "echo_add").execute('{"a": 2, "b": 3}', DEPS)
    assert outcome == Outcome("5")


async def test_a_stdio_servers_stderr_becomes_a_log_line_not_terminal_output(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    entry = stdio_entry(env={"ECHO_STDERR": "starting up \x1b]0;owned\x07 now"})
    with caplog.at_level(logging.WARNING, logger="fisk_ai.tools.mcp.sessions"):
        async with open_mcp_sessions([entry]) as sessions:
            await tool_named(sessions, "echo_add").execute('{"a": 1, "b": 1}', DEPS)
    logged = [record.getMessage() for record in caplog.records]
    assert any("starting up" in line and "now" in line for line in logged)
    assert not any("\x1b" in line for line in logged)
    assert "starting up" not in capfd.readouterr().err


async def test_the_child_gets_its_env_and_never_the_provider_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-leak")
    monkeypatch.setenv("FISK_TEST_ECHO", SECRET)
    entry = stdio_entry(env={"ECHO_SECRET": "${FISK_TEST_ECHO}"})
    async with open_mcp_sessions([entry]) as sessions:
        outcome = await tool_named(sessions, "echo_whoami").execute("", DEPS)
    assert outcome.output == f"secret={SECRET} anthropic=no"


async def test_a_missing_variable_fails_the_connect_naming_it_and_the_server() -> None:
    entry = stdio_entry(env={"ECHO_SECRET": "${FISK_TEST_SURELY_UNSET}"})
    with pytest.raises(McpServerError) as failure:
        async with open_mcp_sessions([entry]):
            pass
    assert "FISK_TEST_SURELY_UNSET" in str(failure.value)
    assert '"echo"' in str(failure.value)


async def test_the_child_is_reaped_when_the_sessions_close_on_an_error() -> None:
    pid = 0
    with pytest.raises(RuntimeError):
        async with open_mcp_sessions([stdio_entry()]) as sessions:
            pid = int((await tool_named(sessions, "echo_pid").execute("", DEPS)).output)
            raise RuntimeError("the run crashed")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_server_that_dies_mid_run_is_reconnected() -> None:
    async with open_mcp_sessions([stdio_entry()]) as sessions:
        died = await tool_named(sessions, "echo_die").execute("", DEPS)
        assert died.is_error
        assert '"echo"' in died.output
        again = await tool_named(sessions, "echo_add").execute('{"a": 1, "b": 1}', DEPS)
    assert again == Outcome("2")


async def test_list_changed_relists_and_names_the_new_tool() -> None:
    async with open_mcp_sessions([stdio_entry()]) as sessions:
        before = sessions.generation
        assert "echo_late" not in [tool.name for tool in sessions.tools]
        await tool_named(sessions, "echo_grow").execute("", DEPS)
        await asyncio.wait_for(sessions.wait_past(before), 20)
        assert "echo_late" in [tool.name for tool in sessions.tools]


async def test_a_server_that_never_answers_fails_within_its_timeout() -> None:
    entry = stdio_entry(timeout="300ms")
    entry = entry.model_copy(
        update={"args": ["-c", "import time; time.sleep(30)"], "command": sys.executable}
    )
    with pytest.raises(McpServerError) as failure:
        async with open_mcp_sessions([entry]):
            pass
    assert "no answer within 0.3s" in str(failure.value)
    assert '"echo"' in str(failure.value)


async def test_an_unreachable_server_fails_naming_it_without_its_secrets(
    monkeypatch: pytest.MonkeyPatch, free_port: int
) -> None:
    monkeypatch.setenv("FISK_TEST_TOKEN", SECRET)
    entry = http_entry(
        f"http://127.0.0.1:{free_port}/api/${{FISK_TEST_TOKEN}}/mcp?key=${{FISK_TEST_TOKEN}}",
        headers={"Authorization": "Bearer ${FISK_TEST_TOKEN}"},
        timeout="5s",
    )
    with pytest.raises(McpServerError) as failure:
        async with open_mcp_sessions([entry]):
            pass
    message = str(failure.value)
    assert '"web"' in message
    assert SECRET not in message
    assert "${FISK_TEST_TOKEN}" in message
    reports = await discover_mcp_servers([entry])
    assert SECRET not in reports[0].unavailable
    assert SECRET not in server_endpoint(entry)


async def test_an_sse_endpoint_is_refused_with_the_transport_named(free_port: int) -> None:
    entry = http_entry(f"http://127.0.0.1:{free_port}/sse", timeout="5s")
    with pytest.raises(McpServerError, match="older HTTP\\+SSE transport, which is not supported"):
        async with open_mcp_sessions([entry]):
            pass


async def test_streamable_http_server_tools_are_imported_with_headers() -> None:
    from tests.mcp.echo_server import server

    async with (
        served_over_http(server.streamable_http_app()) as url,
        open_mcp_sessions([http_entry(url, headers={"X-Test": "yes"})]) as sessions,
    ):
        outcome = await tool_named(sessions, "web_echo").execute('{"text": "hi"}', DEPS)
    assert outcome == Outcome("hi")


async def test_discovery_reports_a_down_server_and_carries_on(free_port: int) -> None:
    down = http_entry(f"http://127.0.0.1:{free_port}/mcp", timeout="5s")
    reports = await discover_mcp_servers([down, stdio_entry()])
    assert reports[0].listing is None
    assert reports[0].unavailable
    listing = reports[1].listing
    assert listing is not None
    assert "echo_echo" in [tool.name for tool in listing.tools]


async def test_an_entrys_exclude_leaves_out_the_tools_it_names() -> None:
    async with open_mcp_sessions([stdio_entry(exclude={"tools": ["^add$"]})]) as sessions:
        names = [tool.name for tool in sessions.tools]
    assert "echo_echo" in names and "echo_add" not in names
