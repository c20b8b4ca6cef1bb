"""Memory through the installed `fisk`: a run whose model reads a memory saved earlier, the
traced call line, `fisk info`'s Memory section, and the jetstream backend's startup refusal."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.memory.file import FileMemoryStore
from tests.e2e.agent_runs import fisk, fisk_environment, tool_results, write_config
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use

MEMORY_CONFIG = "harness:\n  memory:\n    enabled: true\n"
JETSTREAM_CONFIG = (
    "nats_context: e2e\n"
    "harness:\n"
    "  memory:\n"
    "    enabled: true\n"
    "    backend: jetstream\n"
    "    options:\n"
    "      bucket: agent-memory\n"
)


def system_text(request: dict[str, object]) -> str:
    blocks = request["system"]
    assert isinstance(blocks, list)
    return "\n\n".join(block["text"] for block in blocks)


def run(home: Path, api: FakeMessagesAPI, *args: str) -> subprocess.CompletedProcess[str]:
    return fisk("run", "--no-tui", *args, cwd=home, env=fisk_environment(home, api))


async def test_the_model_reads_a_memory_an_earlier_run_saved(tmp_path: Path) -> None:
    config = write_config(tmp_path, extra=MEMORY_CONFIG)
    # The default directory, memory/<identity>, resolves against the working directory.
    await FileMemoryStore(tmp_path / "memory" / "fisk-ai").create(
        "build.notes", "How the fleet is built", "make fleet, then make test"
    )
    turns = [
        reply(tool_use("toolu_1", "memory_read", {"key": "build.notes"}), stop_reason="tool_use"),
        reply(text("You build it with make fleet.")),
    ]

    with FakeMessagesAPI(turns) as api:
        ran = await asyncio.to_thread(run, tmp_path, api, "--config", str(config), "how?")

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "You build it with make fleet."
    assert "-> memory_read build.notes" in ran.stderr.splitlines()
    first = api.requests[0]
    assert {tool["name"] for tool in first["tools"]} == {
        "memory_list",
        "memory_read",
        "memory_write",
        "memory_delete",
    }
    system = system_text(first)
    assert "memory_write" in system
    assert system.endswith("- build.notes: How the fleet is built\n</memory-index>")
    [content] = tool_results(api.requests[1]).values()
    result = json.loads(content if isinstance(content, str) else content[0]["text"])
    assert result == {
        "found": True,
        "key": "build.notes",
        "description": "How the fleet is built",
        "content": "make fleet, then make test",
    }


async def test_read_only_memory_offers_only_the_readers(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, extra=MEMORY_CONFIG + "    read_only: true\n    no_index: true\n"
    )

    with FakeMessagesAPI([reply(text("ok"))]) as api:
        ran = await asyncio.to_thread(run, tmp_path, api, "--config", str(config), "hi")

    assert ran.returncode == 0, ran.stderr
    request = api.requests[0]
    assert [tool["name"] for tool in request["tools"]] == ["memory_list", "memory_read"]
    assert "<memory-index>" not in system_text(request)


async def test_info_reports_the_memory_as_it_is(tmp_path: Path) -> None:
    config = write_config(tmp_path, extra=MEMORY_CONFIG)
    store = FileMemoryStore(tmp_path / "memory" / "fisk-ai")
    await store.create("a", "d", "c")
    await store.create("b", "d", "c")

    shown = await asyncio.to_thread(
        fisk, "info", "--config", str(config), cwd=tmp_path, env=fisk_environment(tmp_path)
    )

    assert shown.returncode == 0, shown.stderr
    section = shown.stdout.split("Memory", 1)[1]
    assert "Backend" in section and "file" in section
    assert "memory/fisk-ai" in section
    assert "Entries" in section and "2" in section.split("Entries", 1)[1].splitlines()[0]
    assert "memory_write" in shown.stdout


@pytest.mark.skipif(locate_server_binary() is None, reason="no nats-server binary on this machine")
async def test_a_missing_bucket_fails_the_run_at_startup_with_the_fix(tmp_path: Path) -> None:
    async with EmbeddedBroker(jetstream=True) as broker:
        contexts = tmp_path / "xdg-config" / "nats" / "context"
        contexts.mkdir(parents=True)
        (contexts / "e2e.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
        config = write_config(tmp_path, extra=JETSTREAM_CONFIG)
        environment = {"XDG_CONFIG_HOME": str(tmp_path / "xdg-config")}

        with FakeMessagesAPI([reply(text("never asked"))]) as api:
            ran = await asyncio.to_thread(
                fisk,
                "run",
                "--no-tui",
                "--config",
                str(config),
                "hi",
                cwd=tmp_path,
                env=fisk_environment(tmp_path, api, environment),
            )

    assert ran.returncode == 1 and ran.stdout == ""
    [line] = ran.stderr.splitlines()
    assert line.startswith("fisk: error: memory bucket agent-memory does not exist")
    assert "nats --context e2e kv add agent-memory --history=1 --max-value-size=69600" in line
    assert "harness.memory.options.bucket" in line
    assert api.requests == []
