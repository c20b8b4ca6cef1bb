"""`fisk mcp`'s server driven by the SDK's own Client, in process and over streamable HTTP:
schemas, descriptions and annotations, elicitation for gated commands, the confirm policies,
the concurrency limit, the tool timeout, and the rule that imported tools are never served."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client

from fisk_ai.cli.mcp import lone_knowledge_tool
from fisk_ai.config import ConfirmOverMcp
from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.llm.types import ToolDef
from fisk_ai.mcpserver.listener import HUNG_UP_LINE, HangUpFolding, streamable_app
from fisk_ai.mcpserver.serving import (
    ServeOptions,
    ToolCalls,
    build_server,
    select_mcp_tools,
)
from fisk_ai.serve.tools import select_served_tools
from fisk_ai.tools.base import ExecDeps, Kind, Outcome, Presentation, Tool
from fisk_ai.tools.builtin.knowledge import knowledge_source
from fisk_ai.tools.fiskapp.introspect import introspect
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.mcp.importing import import_listing
from tests.fakes.fiskapp import (
    application,
    arg,
    command,
    hangs,
    open_pid_fifo,
    read_pid,
    wait_for_exit,
    write_fake_app,
)
from tests.mcp.conftest import served_over_http

OPS = application(
    "ops",
    commands=[
        command("status", "Show the fleet's health", tags=["ai:read_only", "ai:idempotent"]),
        command(
            "restart",
            "Restart a service",
            tags=["ai:confirm", "ai:destructive"],
            args=[arg("name", "The service", required=True)],
        ),
        command("purge", "Purge the cache", tags=["impact:rw", "ai:additive"]),
    ],
)


async def ops_tools(directory: Path, model: dict[str, Any] = OPS) -> tuple[Tool, ...]:
    app = write_fake_app(directory, model, name="ops")
    return tuple(load_application(await introspect(str(app)), str(app)).tools)


def calls_for(
    tools: Sequence[Tool],
    *,
    confirm: ConfirmOverMcp = ConfirmOverMcp.AUTO,
    max_concurrent: int = 2,
    tool_timeout: timedelta = timedelta(seconds=30),
    log: list[str] | None = None,
) -> ToolCalls:
    selection = select_mcp_tools(tools, confirm_tags=("impact:rw",))
    options = ServeOptions(
        name="ops",
        version="1.0.0",
        instructions="Look before you act.",
        max_concurrent=max_concurrent,
        tool_timeout=tool_timeout,
        confirm=confirm,
        confirm_tags=("impact:rw",),
    )
    lines = log if log is not None else []
    return ToolCalls(selection.exposed, options, log=lines.append)


def answering(approve: bool | None, asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        if approve is None:
            return mcp_types.ElicitResult(action="decline")
        return mcp_types.ElicitResult(action="accept", content={"approve": approve})

    return callback


def text_of(result: mcp_types.CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_tools_carry_schema_tags_line_and_annotations(tmp_path: Path) -> None:
    calls = calls_for(await ops_tools(tmp_path))
    async with Client(build_server(calls)) as client:
        assert client.instructions == "Look before you act."
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == {"status", "restart", "purge"}
    status, restart, purge = listed["status"], listed["restart"], listed["purge"]
    assert status.description is not None
    assert status.description.endswith("Tags: ai:read_only, ai:idempotent")
    assert status.annotations is not None
    assert status.annotations.read_only_hint is True
    assert status.annotations.idempotent_hint is True
    assert restart.annotations is not None
    assert restart.annotations.destructive_hint is True
    assert restart.input_schema["required"] == ["name"]
    assert purge.annotations is not None
    assert purge.annotations.destructive_hint is False
    assert purge.annotations.read_only_hint is None


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_gated_command_runs_when_the_caller_approves(tmp_path: Path, mode: str) -> None:
    asked: list[str] = []
    calls = calls_for(await ops_tools(tmp_path))
    async with Client(
        build_server(calls), mode=mode, elicitation_callback=answering(True, asked)
    ) as client:
        result = await client.call_tool("restart", {"name": "web"})
    assert not result.is_error
    assert json.loads(text_of(result))["command"] == "restart -- web"
    assert asked == ["Allow ops to run: restart -- web? (gated by ai:confirm)"]


@pytest.mark.parametrize("answer", [False, None])
async def test_anything_but_an_approval_declines(tmp_path: Path, answer: bool | None) -> None:
    asked: list[str] = []
    log: list[str] = []
    calls = calls_for(await ops_tools(tmp_path), log=log)
    async with Client(build_server(calls), elicitation_callback=answering(answer, asked)) as client:
        result = await client.call_tool("purge", {})
    assert result.is_error
    assert "did not approve" in text_of(result)
    assert asked and "gated by impact:rw" in asked[0]
    assert not any(line.startswith("running") for line in log)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_without_elicitation_is_refused_under_auto(
    tmp_path: Path, mode: str
) -> None:
    log: list[str] = []
    calls = calls_for(await ops_tools(tmp_path), log=log)
    async with Client(build_server(calls), mode=mode) as client:
        result = await client.call_tool("purge", {})
    assert result.is_error
    assert "cannot be asked through elicitation; the command was not run" in text_of(result)
    assert log == ["refused purge: the client cannot be asked (confirm_over_mcp: auto)"]


async def test_never_runs_a_gated_command_for_a_client_without_elicitation(
    tmp_path: Path,
) -> None:
    calls = calls_for(await ops_tools(tmp_path), confirm=ConfirmOverMcp.NEVER)
    async with Client(build_server(calls)) as client:
        result = await client.call_tool("purge", {})
    assert not result.is_error
    assert json.loads(text_of(result))["command"] == "purge"


async def test_arguments_are_checked_before_anybody_is_asked(tmp_path: Path) -> None:
    asked: list[str] = []
    calls = calls_for(await ops_tools(tmp_path))
    async with Client(build_server(calls), elicitation_callback=answering(True, asked)) as client:
        result = await client.call_tool("restart", {"nmae": "web"})
    assert result.is_error
    assert "without required parameter(s): name" in text_of(result)
    assert asked == []


async def test_a_call_that_did_not_run_is_not_logged_as_running(tmp_path: Path) -> None:
    log: list[str] = []
    calls = calls_for(await ops_tools(tmp_path), log=log)
    async with Client(build_server(calls), elicitation_callback=answering(True, [])) as client:
        await client.call_tool("restart", {"name": 7})
    assert not any(line.startswith("running") for line in log)
    assert log and log[0].startswith("refused restart: ")


async def test_a_client_without_elicitation_is_refused_under_always(tmp_path: Path) -> None:
    calls = calls_for(await ops_tools(tmp_path), confirm=ConfirmOverMcp.ALWAYS)
    async with Client(build_server(calls)) as client:
        result = await client.call_tool("purge", {})
    assert result.is_error
    assert "cannot be asked through elicitation" in text_of(result)


async def test_never_asks_even_a_client_that_could_answer(tmp_path: Path) -> None:
    asked: list[str] = []
    calls = calls_for(await ops_tools(tmp_path), confirm=ConfirmOverMcp.NEVER)
    async with Client(build_server(calls), elicitation_callback=answering(False, asked)) as client:
        result = await client.call_tool("purge", {})
    assert not result.is_error
    assert asked == []


@dataclass
class Blocking:
    """A served tool that waits until released, counting how many run at once."""

    gate: asyncio.Event
    running: list[int] = field(default_factory=lambda: [0, 0])
    name: str = "block"
    description: str = "Blocks until released."
    model_description: str = "Blocks until released."
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    tags: tuple[str, ...] = ()

    @property
    def kind(self) -> Kind:
        return Kind.CUSTOM

    @property
    def presentation(self) -> Presentation:
        return Presentation.TRACED

    @property
    def mcp_exposable(self) -> bool:
        return True

    @property
    def a2a_exposable(self) -> bool:
        return False

    def confirm_trigger(self, confirm_tags: Sequence[str]) -> str | None:
        return None

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.description, self.input_schema, defer_loading)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        self.running[0] += 1
        self.running[1] = max(self.running[1], self.running[0])
        await self.gate.wait()
        self.running[0] -= 1
        return Outcome("done")


async def test_calls_past_the_limit_wait_for_a_slot() -> None:
    tool = Blocking(asyncio.Event())
    waiting = asyncio.Event()

    def log(line: str) -> None:
        if line.startswith("waiting for a slot"):
            waiting.set()

    calls = calls_for([tool], max_concurrent=1)
    calls.log = log
    async with Client(build_server(calls)) as client:
        first = asyncio.create_task(client.call_tool("block", {}))
        second = asyncio.create_task(client.call_tool("block", {}))
        await waiting.wait()
        assert tool.running[0] == 1
        tool.gate.set()
        results = await asyncio.gather(first, second)
    assert [text_of(result) for result in results] == ["done", "done"]
    assert tool.running[1] == 1


async def test_the_tool_timeout_stops_the_command_and_its_process_group(
    tmp_path: Path,
) -> None:
    fifo = open_pid_fifo(tmp_path / "pid")
    model = application("ops", commands=[command("wait", "Waits", action=hangs(tmp_path / "pid"))])
    calls = calls_for(await ops_tools(tmp_path, model), tool_timeout=timedelta(milliseconds=500))
    async with Client(build_server(calls)) as client:
        call = asyncio.create_task(client.call_tool("wait", {}))
        child = await read_pid(fifo)
        result = await call
    assert result.is_error
    assert "expose.agent.mcp.tool_timeout" in text_of(result)
    assert await wait_for_exit(child)


async def never(tool: str, arguments: Any) -> Outcome:
    raise AssertionError("not called")


class Descriptor:
    name = "search"
    description = "Search the docs."
    input_schema: Mapping[str, Any] = {"type": "object"}


async def test_imported_mcp_tools_are_never_served_over_mcp_or_a2a(tmp_path: Path) -> None:
    imported = import_listing("docs", "docs", [Descriptor()], never).tools
    tools = (*await ops_tools(tmp_path), *imported)
    over_mcp = select_mcp_tools(tools)
    over_a2a = select_served_tools(tools)
    assert "docs_search" in over_mcp.withheld
    assert "docs_search" not in [tool.name for tool in over_mcp.exposed]
    assert "docs_search" in over_a2a.withheld
    assert "docs_search" not in [tool.name for tool in over_a2a.exposed]


async def test_the_server_answers_over_streamable_http(tmp_path: Path) -> None:
    calls = calls_for(await ops_tools(tmp_path))
    app = build_server(calls).streamable_http_app(streamable_http_path="/mcp")
    async with served_over_http(app) as url, Client(url) as client:
        result = await client.call_tool("status", {})
    assert json.loads(text_of(result))["command"] == "status"


def knowledge_tools(directory: Path) -> tuple[Tool, ...]:
    index = KnowledgeIndex(directory / "knowledge")
    return tuple(knowledge_source(index, top_k=5, max_injected_tokens=1000).tools)


async def test_knowledge_tools_are_served_only_as_builtins_names_them(tmp_path: Path) -> None:
    tools = (*await ops_tools(tmp_path), *knowledge_tools(tmp_path))

    unnamed = select_mcp_tools(tools)
    named = select_mcp_tools(tools, builtins=frozenset({"knowledge_search"}))

    assert {"knowledge_search", "knowledge_enumerate"} <= set(unnamed.withheld)
    assert [tool.name for tool in named.exposed if tool.kind is Kind.BUILTIN] == [
        "knowledge_search"
    ]
    assert "knowledge_enumerate" in named.withheld


async def test_a_client_searches_knowledge_through_fisk_mcp(tmp_path: Path) -> None:
    tools = knowledge_tools(tmp_path)
    selection = select_mcp_tools(
        tools, builtins=frozenset({"knowledge_search", "knowledge_enumerate"})
    )
    options = ServeOptions(
        name="docs",
        version="1.0.0",
        instructions="",
        max_concurrent=2,
        tool_timeout=timedelta(seconds=30),
        confirm=ConfirmOverMcp.AUTO,
        confirm_tags=(),
    )
    logged: list[str] = []
    calls = ToolCalls(selection.exposed, options, log=logged.append)
    async with Client(build_server(calls)) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        result = await client.call_tool("knowledge_search", {"query": "retention"})

    assert listed == {"knowledge_search", "knowledge_enumerate"}
    assert json.loads(text_of(result))["status"] == "index_not_built"


async def test_knowledge_tools_are_read_only_idempotent_and_closed_world(tmp_path: Path) -> None:
    tools = knowledge_tools(tmp_path)
    selection = select_mcp_tools(
        tools, builtins=frozenset({"knowledge_search", "knowledge_enumerate"})
    )
    calls = ToolCalls(selection.exposed, ServeOptions(name="docs", version="1.0.0"))
    async with Client(build_server(calls)) as client:
        listed = (await client.list_tools()).tools
    for tool in listed:
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.idempotent_hint is True
        assert tool.annotations.open_world_hint is False


async def test_the_endpoint_answers_at_the_root_as_the_go_docs_configure_it(
    tmp_path: Path,
) -> None:
    calls = calls_for(await ops_tools(tmp_path))
    async with served_over_http(streamable_app(calls, "127.0.0.1")) as url:
        root = url.removesuffix("/mcp")
        async with Client(root) as client:
            result = await client.call_tool("status", {})
    assert json.loads(text_of(result))["command"] == "status"


def test_a_client_hanging_up_mid_call_leaves_one_line_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # What the SDK's transport and then uvicorn log when a client's session closes under a
    # call (a race no test can call up on demand): a ClosedResourceError, then uvicorn's
    # complaint about the error response it could no longer send.
    import anyio

    said: list[str] = []
    folding = HangUpFolding(said.append)
    folding.install()
    try:
        try:
            raise anyio.ClosedResourceError
        except anyio.ClosedResourceError:
            logging.getLogger("mcp.server.streamable_http").exception("Error handling POST request")
            try:
                raise RuntimeError(
                    "Unexpected ASGI message 'http.response.start' sent, after response "
                    "already completed."
                )
            except RuntimeError:
                logging.getLogger("uvicorn.error").exception("Exception in ASGI application")
    finally:
        folding.remove()
    assert said == [HUNG_UP_LINE]
    assert not [record for record in caplog.records if record.exc_info]


def test_another_transport_failure_keeps_its_first_line() -> None:
    said: list[str] = []
    folding = HangUpFolding(said.append)
    folding.install()
    try:
        try:
            raise ValueError("bad frame\nmore detail")
        except ValueError:
            logging.getLogger("mcp.server.streamable_http").exception("SSE response error")
    finally:
        folding.remove()
    assert said == ["mcp: SSE response error: ValueError: bad frame"]


def test_serving_one_knowledge_tool_warns_what_a_caller_loses() -> None:
    enumerate_only = lone_knowledge_tool({"status", "knowledge_enumerate"})
    assert enumerate_only is not None and "cannot read their text" in enumerate_only
    search_only = lone_knowledge_tool({"knowledge_search"})
    assert search_only is not None and "every document" in search_only
    assert lone_knowledge_tool({"knowledge_search", "knowledge_enumerate"}) is None
    assert lone_knowledge_tool({"status"}) is None
