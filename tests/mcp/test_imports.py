"""What a run imports from a server and what the model is sent back: descriptors the SDK or the
model API would refuse, each left out with its reason in the run while the rest of the server
is kept; results of every content kind, bounded; a list the server changes while answering a
call; and the era a server speaks, remembered."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest

from fisk_ai.tools.base import ExecDeps, Outcome
from fisk_ai.tools.fiskapp.execute import OUTPUT_LIMIT
from fisk_ai.tools.imported import ImportedOutcome, ResultImage
from fisk_ai.tools.mcp.sessions import McpSessions, open_mcp_sessions
from tests.mcp.conftest import raw_entry, stdio_entry
from tests.mcp.server_tools import GOOD, PNG

DEPS = ExecDeps()


def names(sessions: McpSessions) -> list[str]:
    return [tool.name for tool in sessions.tools]


async def imported(*tools: dict[str, Any]) -> tuple[list[str], list[str]]:
    warned: list[str] = []
    async with open_mcp_sessions(
        [raw_entry(RAW_TOOLS=json.dumps([GOOD, *tools]))], warn=warned.append
    ) as sessions:
        return names(sessions), warned


async def test_a_schema_root_that_is_not_an_object_loses_only_that_tool() -> None:
    kept, warned = await imported(
        {"name": "listed", "description": "An array root.", "inputSchema": {"type": "array"}}
    )
    assert kept == ["raw_good"]
    assert warned == [
        'MCP server "raw" lists the tool "listed", left out since its input schema\'s root type '
        "is not object"
    ]


async def test_a_tool_without_a_description_is_left_out_with_its_reason_in_the_run() -> None:
    kept, warned = await imported({"name": "quiet", "inputSchema": {"type": "object"}})
    assert kept == ["raw_good"]
    assert warned == [
        'MCP server "raw" lists the tool "quiet", left out since it has no description'
    ]


async def test_a_descriptor_without_a_name_is_left_out_with_its_reason_in_the_run() -> None:
    kept, warned = await imported({"description": "Nameless.", "inputSchema": {"type": "object"}})
    assert kept == ["raw_good"]
    assert warned == ['MCP server "raw" lists a tool, left out since it has no name']


async def test_a_name_with_a_space_is_left_out_with_its_reason_in_the_run() -> None:
    kept, warned = await imported(
        {"name": "has space", "description": "Spaced.", "inputSchema": {"type": "object"}}
    )
    assert kept == ["raw_good"]
    assert "letters, digits, - and _ only" in warned[0]


async def test_a_name_too_long_for_the_model_api_is_left_out() -> None:
    kept, warned = await imported(
        {"name": "x" * 61, "description": "Long.", "inputSchema": {"type": "object"}}
    )
    assert kept == ["raw_good"]
    assert "over 64 characters" in warned[0]


async def test_the_second_of_two_tools_of_one_name_is_left_out() -> None:
    kept, warned = await imported({**GOOD, "description": "The other one."})
    assert kept == ["raw_good"]
    assert warned == [
        'MCP server "raw" lists the tool "good", left out since the server lists another tool '
        "of the same name first"
    ]


async def call_raw(content: list[dict[str, Any]] | None = None, **env: str) -> Outcome:
    if content is not None:
        env["RAW_CONTENT"] = json.dumps(content)
    async with open_mcp_sessions([raw_entry(RAW_TOOLS=json.dumps([GOOD]), **env)]) as sessions:
        return await sessions.tools[0].execute("{}", DEPS)


async def test_an_image_stays_an_image_for_the_model() -> None:
    outcome = await call_raw([{"type": "image", "data": PNG, "mimeType": "image/png"}])
    assert isinstance(outcome, ImportedOutcome)
    assert outcome.images == (ResultImage("image/png", PNG),)
    assert PNG not in outcome.output
    assert outcome.output == "[image 1: image/png, 308 bytes, attached]"


async def test_an_image_of_a_type_the_model_cannot_read_is_named_and_left_out() -> None:
    outcome = await call_raw([{"type": "image", "data": PNG, "mimeType": "image/tiff"}])
    assert not isinstance(outcome, ImportedOutcome)
    assert outcome.output == (
        "[an image (image/tiff, 308 bytes) was left out: it is not of a type the model reads]"
    )


async def test_an_embedded_resource_becomes_its_text_under_its_uri() -> None:
    resource = {"uri": "demo://notes/a.txt", "mimeType": "text/plain", "text": "the notes"}
    outcome = await call_raw([{"type": "resource", "resource": resource}])
    assert outcome.output == "[resource demo://notes/a.txt]\nthe notes"


async def test_a_binary_resource_is_named_and_left_out() -> None:
    blob = base64.b64encode(b"\x1f\x8b" + b"\0" * 1000).decode()
    resource = {"uri": "demo://a.gz", "mimeType": "application/gzip", "blob": blob}
    outcome = await call_raw([{"type": "resource", "resource": resource}])
    assert blob not in outcome.output
    assert outcome.output == (
        "[the resource demo://a.gz (application/gzip, 1002 bytes) was left out: it is not as text]"
    )


async def test_a_huge_result_is_bounded_as_command_output_is_and_says_what_was_cut() -> None:
    outcome = await call_raw(RAW_BIG_TEXT=str(10 * 1024 * 1024))
    assert len(outcome.output) < 2 * OUTPUT_LIMIT
    assert "...[output truncated]..." in outcome.output
    last_line = outcome.output.splitlines()[-1]
    assert last_line.startswith("[the result was 10.0 MiB of text; all but its first and last")


async def test_a_tool_the_server_adds_while_answering_is_there_when_the_call_returns() -> None:
    async with open_mcp_sessions([stdio_entry()]) as sessions:
        grow = next(tool for tool in sessions.tools if tool.name == "echo_grow")
        await grow.execute("", DEPS)
        assert "echo_late" in names(sessions)


async def test_a_handshake_era_servers_probe_errors_fold_into_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="fisk_ai.tools.mcp.sessions"):
        async with open_mcp_sessions([raw_entry(RAW_TOOLS=json.dumps([GOOD]))]):
            pass
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1
    assert "answered the 2026-07-28 protocol's probe" in lines[0]


async def test_a_reconnect_remembers_the_era_and_does_not_probe_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="fisk_ai.tools.mcp.sessions"):
        async with open_mcp_sessions([raw_entry(RAW_TOOLS=json.dumps([GOOD]))]) as sessions:
            connection = sessions.connections[0]
            await connection.close()
            await connection.reconnect()
    probes = [record for record in caplog.records if "probe" in record.getMessage()]
    assert len(probes) == 1
