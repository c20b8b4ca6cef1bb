"""remote_tools as a user runs them: agent A serves its tools with `fisk serve`, agent B imports
them from A's card and its `fisk run --no-tui` calls one, all over an embedded nats-server.

B wraps an application of its own with a `status` command, so A's `status` arrives as
`ops_status` while A's `ls` keeps its bare name.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from tests.e2e.agent_runs import (
    command_output,
    fisk,
    fisk_environment,
    summary_fields,
    tool_results,
    write_config,
)
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import application, arg, command, write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.patience import DEADLINE

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

SERVING = "ops-tools"
ALIAS = "ops"
WAIT = DEADLINE
ANSWER = "There is one stream."


@dataclass(frozen=True)
class Agents:
    home: Path
    environment: dict[str, str]
    importer: Path
    """Agent B's configuration: its own `status` command, and A's tools under remote_tools."""


def context_environment(home: Path, broker: EmbeddedBroker) -> dict[str, str]:
    contexts = home / "xdg" / "nats" / "context"
    contexts.mkdir(parents=True)
    (contexts / "test.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
    return {"XDG_CONFIG_HOME": str(home / "xdg")}


def importer_config(home: Path, remote_name: str) -> Path:
    local = write_fake_app(
        home, application("local", commands=[command("status", "Local status")]), name="local"
    )
    return write_config(
        home,
        application=local,
        extra=(
            "nats_context: test\n"
            "remote_tools:\n"
            f"  - name: {remote_name}\n"
            f"    alias: {ALIAS}\n"
            "expose:\n"
            "  agent:\n"
            "    a2a:\n"
            "      request_timeout: 5s\n"
        ),
    )


@pytest.fixture
async def agents(tmp_path: Path) -> AsyncIterator[Agents]:
    async with EmbeddedBroker() as broker:
        environment = fisk_environment(tmp_path, extra=context_environment(tmp_path, broker))
        served_home = tmp_path / "served"
        served_home.mkdir()
        served_app = write_fake_app(
            served_home,
            application(
                "ops",
                commands=[
                    command("ls", "List streams", args=[arg("subject", "Subject filter")]),
                    command("status", "Fleet status"),
                ],
            ),
            name="ops",
        )
        served_config = served_home / "tools.yaml"
        served_config.write_text(
            f"identity: {SERVING}\n"
            f"application_path: {served_app}\n"
            "nats_context: test\n"
            "expose:\n"
            "  agent:\n"
            "    a2a:\n"
            "      serve_tools: true\n"
        )
        served = await asyncio.create_subprocess_exec(
            str(FISK),
            "serve",
            "--config",
            str(served_config),
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert served.stdout is not None
            # The banner's last line lists the last exposed tool, once the service answers.
            while b"status" not in await asyncio.wait_for(served.stdout.readline(), WAIT):
                pass
            yield Agents(tmp_path, environment, importer_config(tmp_path, SERVING))
        finally:
            served.send_signal(signal.SIGTERM)
            await asyncio.wait_for(served.wait(), WAIT)


@pytest.fixture
async def nobody_serving(tmp_path: Path) -> AsyncIterator[Agents]:
    async with EmbeddedBroker() as broker:
        environment = fisk_environment(tmp_path, extra=context_environment(tmp_path, broker))
        yield Agents(tmp_path, environment, importer_config(tmp_path, "nobody"))


async def run_importer(agents: Agents, api: FakeMessagesAPI) -> subprocess.CompletedProcess[str]:
    environment = fisk_environment(agents.home, api, agents.environment)
    return await asyncio.to_thread(
        fisk,
        "run",
        "--no-tui",
        "--state-dir",
        str(agents.home / "sessions"),
        "--config",
        str(agents.importer),
        "list the streams",
        cwd=agents.home,
        env=environment,
    )


async def test_a_run_calls_the_peers_tool_and_counts_the_remote_call(agents: Agents) -> None:
    turns = [
        reply(tool_use("tu_ls", "ls", {"subject": "ORDERS"}), stop_reason="tool_use"),
        reply(text(ANSWER)),
    ]
    with FakeMessagesAPI(turns) as api:
        result = await run_importer(agents, api)
        requests = list(api.requests)

    assert result.returncode == 0, result.stderr
    assert result.stdout == ANSWER + "\n"
    offered = {tool["name"]: tool for tool in requests[0]["tools"]}
    assert {"status", "ls", "ops_status"} <= set(offered)
    assert offered["ls"]["description"] == "List streams"
    content = tool_results(requests[1])["tu_ls"]
    assert json.loads(command_output(content))["argv"] == ["ls", "--", "ORDERS"]
    assert "-> ls (remote ops)" in result.stderr.splitlines()
    fields = summary_fields(result.stderr)
    assert fields["tool_calls"] == "1"
    assert fields["remote_tool_calls"] == "1"


async def test_info_lists_the_remote_tools_with_the_alias_as_source(agents: Agents) -> None:
    result = await asyncio.to_thread(
        fisk, "info", "--config", str(agents.importer), cwd=agents.home, env=agents.environment
    )

    assert result.returncode == 0, result.stderr
    tools = result.stdout.split("Tools:\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    sources = {row.split()[0]: row.split()[1] for row in tools}
    assert sources == {"status": "local", "ls": ALIAS, "ops_status": ALIAS}
    assert "Remote tool hosts:\n  ops: 2 tools\n" in result.stdout


async def test_a_run_fails_naming_a_host_that_does_not_answer(nobody_serving: Agents) -> None:
    with FakeMessagesAPI([reply(text(ANSWER))]) as api:
        result = await run_importer(nobody_serving, api)
        requests = list(api.requests)

    assert result.returncode == 1
    assert f'remote_tools "{ALIAS}" cannot be imported' in result.stderr
    assert "remote agent unavailable" in result.stderr
    assert requests == []


async def test_info_reports_a_host_that_does_not_answer_and_carries_on(
    nobody_serving: Agents,
) -> None:
    result = await asyncio.to_thread(
        fisk,
        "info",
        "--config",
        str(nobody_serving.importer),
        cwd=nobody_serving.home,
        env=nobody_serving.environment,
    )

    assert result.returncode == 0, result.stderr
    assert f"  {ALIAS}: unavailable (remote agent unavailable" in result.stdout
    assert "status" in result.stdout.split("Tools:\n", 1)[1]
