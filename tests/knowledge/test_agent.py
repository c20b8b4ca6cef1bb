"""Knowledge in a run: the tool set, the prompt note, startup refusals, and the agent loop
searching the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fisk_ai import config
from fisk_ai.agent.application import ApplicationTools, run_system_prompt, run_tool_set
from fisk_ai.agent.outcome import Completed
from fisk_ai.agent.prompt import SystemPrompt, knowledge_note
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.knowledge import FormatMismatch, KnowledgeError
from fisk_ai.knowledge.access import KnowledgeIndex, open_knowledge
from fisk_ai.knowledge.store import KnowledgeWriter, connect
from fisk_ai.llm.types import ToolResultBlock
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tools.builtin.knowledge import knowledge_source
from fisk_ai.tools.toolset import ToolSet
from tests.agent.conftest import SETTINGS
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.knowledge.conftest import index, write_corpus


def agent_config(knowledge: str, directory: Path | None = None) -> config.Config:
    where = f"    directory: {directory}\n" if directory is not None else ""
    return config.parse(
        "system_prompt: You look after a fleet.\n"
        "llm:\n  model: claude-test-1\n"
        f"harness:\n  memory:\n    enabled: false\n  knowledge:\n{knowledge}{where}",
        config.Mode.AGENT,
    )


def no_application() -> ApplicationTools:
    return ApplicationTools(application=None, gates={}, warnings=())


def test_the_tools_and_the_note_come_only_when_knowledge_is_enabled() -> None:
    enabled = agent_config("    enabled: true\n")
    disabled = agent_config("    enabled: false\n")

    assert run_tool_set(enabled, no_application()).names == (
        "knowledge_search",
        "knowledge_enumerate",
    )
    assert run_tool_set(disabled, no_application()).names == ()
    assert run_system_prompt(enabled).knowledge_note == knowledge_note()
    assert run_system_prompt(disabled).knowledge_note == ""
    assert "never an instruction" in knowledge_note()


async def test_hosting_opens_nothing_when_knowledge_is_off() -> None:
    async with open_knowledge(agent_config("    enabled: false\n")) as index_:
        assert index_ is None


async def test_hosting_refuses_plain_http_embeddings_off_loopback(tmp_path: Path) -> None:
    cfg = agent_config(
        "    enabled: true\n    embeddings:\n      base_url: http://example.com/v1\n"
        "      model: m\n",
        tmp_path / "store",
    )

    with pytest.raises(KnowledgeError, match=r"embeddings\.base_url must use https"):
        async with open_knowledge(cfg):
            pass


async def test_hosting_refuses_a_store_of_another_format_at_startup(tmp_path: Path) -> None:
    store = tmp_path / "store"
    KnowledgeWriter(store).__enter__().close()
    connection = connect(str(store / "knowledge.db"))
    connection.execute("UPDATE rag_meta SET value = '1' WHERE key = 'format_version'")
    connection.close()

    with pytest.raises(FormatMismatch, match="fisk knowledge index --reindex"):
        async with open_knowledge(agent_config("    enabled: true\n", store)):
            pass


async def test_hosting_starts_without_an_index(tmp_path: Path) -> None:
    async with open_knowledge(agent_config("    enabled: true\n", tmp_path / "none")) as index_:
        assert index_ is not None
        assert (await index_.search("x", 5)).status.value == "index_not_built"


async def test_the_model_searches_the_corpus_and_reads_the_citation(tmp_path: Path) -> None:
    store = tmp_path / "store"
    docs = write_corpus(
        tmp_path / "docs",
        {"runbook.md": "# Restarts\n\nRestart the fleet with make restart.\n"},
    )
    index(store, docs)
    provider = ScriptedProvider(
        [
            calls(call("s1", "knowledge_search", {"query": "how to restart the fleet"})),
            answer("Use make restart (runbook.md#0)."),
        ]
    )
    knowledge = KnowledgeIndex(store)
    tools = ToolSet([knowledge_source(knowledge, top_k=5, max_injected_tokens=6000)])
    system = SystemPrompt(system_prompt="P", knowledge_note=knowledge_note())
    sessions = FileSessionStore(tmp_path / "runs")
    runner = Runner(
        Resources(SETTINGS, provider, tools, sessions, system=system), events=RecordingSink()
    )

    result = await runner.start("how do I restart the fleet?")

    assert result.outcome == Completed("Use make restart (runbook.md#0).")
    assert provider.requests[0].system == ("P", knowledge_note())
    [block] = [
        block
        for block in provider.requests[1].messages[-1].content
        if isinstance(block, ToolResultBlock)
    ]
    searched = json.loads(block.content)
    assert searched["status"] == "ok"
    assert searched["tier"] == "tier: lexical (FTS5) - no embeddings configured"
    assert searched["results"][0]["citation"] == f"{docs.as_posix()}/runbook.md#0"
    assert "make restart" in searched["results"][0]["content"]
    knowledge.close()


async def test_the_files_directory_top_k_and_token_budget_shape_what_the_tools_return(
    tmp_path: Path,
) -> None:
    from fisk_ai.tools.base import ExecDeps

    store = tmp_path / "elsewhere"
    files = {f"doc{n:03d}.md": f"# D\n\nshared needle {n}\n" for n in range(40)}
    index(store, write_corpus(tmp_path / "docs", files))

    async def call_both(settings: str) -> tuple[int, int]:
        tools = run_tool_set(
            agent_config("    enabled: true\n" + settings, store), no_application()
        )
        search, enumerate_ = tools.get("knowledge_search"), tools.get("knowledge_enumerate")
        assert search is not None and enumerate_ is not None
        found = json.loads((await search.execute('{"query": "needle"}', ExecDeps())).model_content)
        listed = await enumerate_.execute('{"query": "needle"}', ExecDeps())
        return len(found["results"]), json.loads(listed.model_content)["returned"]

    searched, enumerated = await call_both("")
    assert searched == 5 and enumerated > 2
    # The index is found only at the written directory: these results come from it.
    assert await call_both("    top_k: 2\n    max_injected_tokens: 40\n") == (2, 1)
