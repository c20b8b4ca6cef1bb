"""Importing remote_tools hosts over the in-memory transport: discovery, naming, calls, failures."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from fisk_ai import config
from fisk_ai.a2a.in_process import InProcessBroker, InProcessTransport
from fisk_ai.a2a.prompts_client import KEEPALIVE_INTERVAL
from fisk_ai.agent.application import ApplicationTools, run_tool_set
from fisk_ai.errors import FiskError
from fisk_ai.llm.types import ToolDef
from fisk_ai.serve.remote import (
    REQUEST_TIMEOUT_FLOOR,
    HostStatus,
    discover_remote_tools,
    remote_request_timeout,
)
from fisk_ai.serve.tools import ToolsOptions, ToolsServer
from fisk_ai.tools.base import ExecDeps, ExecRecord, Kind, Outcome, Presentation

SERVING = "ops-tools"


@dataclass(frozen=True)
class Echo:
    """A served tool that reports the arguments it was called with, as a command would."""

    name: str
    description: str = "Echoes its arguments"
    kind: Kind = Kind.CUSTOM
    presentation: Presentation = Presentation.TRACED
    mcp_exposable: bool = False
    a2a_exposable: bool = True

    @property
    def model_description(self) -> str:
        return self.description

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return {"type": "object", "properties": {"subject": {"type": "string"}}}

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.description, self.input_schema, defer_loading)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        return Outcome(arguments, exec=ExecRecord(f"{self.name} {arguments}", 0))


def importer(*hosts: str, extra: str = "") -> config.Config:
    entries = "".join(f"  - name: {name}\n    alias: {name.split('-')[0]}\n" for name in hosts)
    return config.parse(
        f"identity: importer\nnats_context: test\nremote_tools:\n{entries}{extra}",
        config.Mode.LENIENT,
    )


@pytest.fixture
async def peer() -> AsyncIterator[InProcessTransport]:
    broker = InProcessBroker()
    server = ToolsServer(
        broker.connect(),
        (Echo("ls"), Echo("status")),
        ToolsOptions(identity=SERVING, version="1.0.0", max_concurrent=2, tool_timeout=None),
    )
    await server.start()
    caller = broker.connect()
    yield caller
    await server.close()
    await broker.close()


def test_the_request_timeout_is_floored_at_three_keepalive_intervals() -> None:
    assert REQUEST_TIMEOUT_FLOOR == 3 * KEEPALIVE_INTERVAL
    short = importer(SERVING, extra="expose:\n  agent:\n    a2a:\n      request_timeout: 5s\n")
    assert remote_request_timeout(short) == REQUEST_TIMEOUT_FLOOR
    assert remote_request_timeout(importer(SERVING)) == timedelta(seconds=120)


def test_host_status_lines_give_the_count_or_the_reason() -> None:
    assert HostStatus("ops", tool_count=2).line == "ops: 2 tools"
    assert HostStatus("ops", unavailable="nothing answers").line == (
        "ops: unavailable (nothing answers)"
    )


async def test_an_imported_tool_calls_the_peer_and_returns_its_envelope(
    peer: InProcessTransport,
) -> None:
    imported = await discover_remote_tools(importer(SERVING), peer, strict=True)
    tools = run_tool_set(importer(SERVING), ApplicationTools(None, {}, ()), imported.hosts)
    ls = tools.get("ls")
    assert ls is not None

    outcome = await ls.execute('{"subject":"ORDERS"}', ExecDeps())

    assert json.loads(outcome.model_content) == {
        "command": 'ls {"subject": "ORDERS"}',
        "exit_code": 0,
        "output": '{"subject": "ORDERS"}',
    }
    assert tools.source_of("ls") == 'remote_tools "ops"'


async def test_a_strict_import_fails_naming_the_host_that_does_not_answer(
    peer: InProcessTransport,
) -> None:
    with pytest.raises(FiskError, match='remote_tools "nobody" cannot be imported'):
        await discover_remote_tools(importer(SERVING, "nobody"), peer, strict=True)


async def test_a_lenient_import_reports_the_host_and_keeps_the_others(
    peer: InProcessTransport,
) -> None:
    imported = await discover_remote_tools(importer("nobody", SERVING), peer, strict=False)

    assert [status.line.split(" (")[0] for status in imported.statuses] == [
        "nobody: unavailable",
        "ops: 2 tools",
    ]
    assert [host.alias for host in imported.hosts] == ["ops"]


async def test_a_call_after_the_peer_left_is_an_unavailable_error_result() -> None:
    broker = InProcessBroker()
    server = ToolsServer(
        broker.connect(),
        (Echo("ls"),),
        ToolsOptions(identity=SERVING, version="1.0.0", max_concurrent=1, tool_timeout=None),
    )
    await server.start()
    imported = await discover_remote_tools(importer(SERVING), broker.connect(), strict=True)
    (host,) = imported.hosts
    await server.close()

    outcome = await host.tools[0].execute("{}", ExecDeps())

    assert outcome.is_error
    assert outcome.output.startswith("remote agent unavailable")
    await broker.close()


async def test_a_hosts_include_and_exclude_choose_which_of_its_tools_are_imported(
    peer: InProcessTransport,
) -> None:
    async def names(selection: str) -> set[str]:
        cfg = config.parse(
            "identity: importer\nnats_context: test\nremote_tools:\n"
            f"  - name: {SERVING}\n    alias: ops\n{selection}",
            config.Mode.LENIENT,
        )
        imported = await discover_remote_tools(cfg, peer, strict=True)
        tools = run_tool_set(cfg, ApplicationTools(None, {}, ()), imported.hosts)
        return {name for name in ("ls", "status") if tools.get(name) is not None}

    assert await names("") == {"ls", "status"}
    assert await names("    include: {tools: ['^st']}\n") == {"status"}
    assert await names("    exclude: {tools: ['^st']}\n") == {"ls"}
