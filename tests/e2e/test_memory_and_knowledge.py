"""Memory and knowledge in one run of the installed `fisk`: the scripted model reads a memory
saved earlier, searches an index built with `fisk knowledge index`, and answers from both."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from fisk_ai.memory.file import FileMemoryStore
from tests.e2e.agent_runs import fisk, fisk_environment, tool_results, write_config
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.knowledge.conftest import write_corpus

REPO_ROOT = Path(__file__).resolve().parents[2]

CONFIG = (
    "harness:\n"
    "  memory:\n"
    "    enabled: true\n"
    "  knowledge:\n"
    "    enabled: true\n"
    "    paths: [runbooks]\n"
)
CORPUS = {
    "runbooks/restart.md": (
        "# Restarting the fleet\n\nDrain each node with `fleetctl drain`, then restart it.\n"
    ),
    "runbooks/disks.md": "# Disks\n\nA full disk is cleaned by rotating the logs.\n",
    "runbooks/tls.md": "# Certificates\n\nRenew the certificates a week before they expire.\n",
}


def result_of(content: Any) -> dict[str, Any]:
    """The JSON a tool answered, whether the content is a string or text blocks."""
    raw = content if isinstance(content, str) else "".join(block["text"] for block in content)
    parsed: dict[str, Any] = json.loads(raw)
    return parsed


async def test_the_model_reads_a_memory_and_searches_knowledge_then_answers(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, extra=CONFIG)
    write_corpus(tmp_path, CORPUS)
    await FileMemoryStore(tmp_path / "memory" / "fisk-ai").create(
        "fleet.notes", "Where the fleet runbooks are", "Use the restart runbook; node 7 is slow."
    )
    environment = fisk_environment(tmp_path)
    indexed = await asyncio.to_thread(
        fisk, "knowledge", "--config", str(config), "index", cwd=tmp_path, env=environment
    )
    assert indexed.returncode == 0, indexed.stderr
    assert "added=3" in indexed.stdout + indexed.stderr

    answer = (
        "Drain each node with fleetctl drain, then restart; node 7 is slow (runbooks/restart.md#0)."
    )
    turns = [
        reply(
            tool_use("toolu_1", "memory_read", {"key": "fleet.notes"}),
            tool_use("toolu_2", "knowledge_search", {"query": "restart the fleet", "top_k": 1}),
            stop_reason="tool_use",
        ),
        reply(text(answer)),
    ]
    with FakeMessagesAPI(turns) as api:
        ran = await asyncio.to_thread(
            fisk,
            "run",
            "--no-tui",
            "--config",
            str(config),
            "how do I restart the fleet?",
            cwd=tmp_path,
            env=fisk_environment(tmp_path, api),
        )

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == answer
    lines = ran.stderr.splitlines()
    assert "-> memory_read fleet.notes" in lines
    assert "-> knowledge_search restart the fleet" in lines
    first = api.requests[0]
    offered = {tool["name"] for tool in first["tools"]}
    assert {"memory_read", "knowledge_search", "knowledge_enumerate"} <= offered
    results = tool_results(api.requests[1])
    memory = result_of(results["toolu_1"])
    assert memory["found"] is True
    assert memory["content"] == "Use the restart runbook; node 7 is slow."
    knowledge = result_of(results["toolu_2"])
    assert knowledge["status"] == "ok"
    assert knowledge["tier"] == "tier: lexical (FTS5) - no embeddings configured"
    [hit] = knowledge["results"]
    assert hit["citation"] == "runbooks/restart.md#0"
    assert "fleetctl drain" in hit["content"]
    assert len(api.requests) == 2


def test_the_docs_walkthrough_answers_offline_from_its_cassette(tmp_path: Path) -> None:
    """docs/knowledge.md's offline walkthrough, in a copy so the repository is not written to:
    index the example's snapshot of the docs, then replay examples/knowledge/ask.cassette."""
    shutil.copytree(REPO_ROOT / "examples" / "knowledge", tmp_path / "examples" / "knowledge")
    config = "examples/knowledge/agent.yaml"
    environment = fisk_environment(tmp_path)

    indexed = fisk("knowledge", "--config", config, "index", cwd=tmp_path, env=environment)
    assert indexed.returncode == 0, indexed.stderr
    ran = fisk(
        "run",
        "--no-tui",
        "--replay",
        "examples/knowledge/ask.cassette",
        "--config",
        config,
        "what may a memory key contain?",
        cwd=tmp_path,
        env=environment,
    )

    # A divergence here means the snapshot in examples/knowledge/corpus changed the passage the
    # cassette holds: re-record it with python examples/knowledge/record.py.
    assert ran.returncode == 0, ran.stderr
    assert "-> knowledge_search memory key letters digits slashes" in ran.stderr.splitlines()
    assert ran.stdout.strip().endswith("(examples/knowledge/corpus/memory.md#1).")
    assert (tmp_path / "knowledge" / "docs" / "knowledge.db").exists()
