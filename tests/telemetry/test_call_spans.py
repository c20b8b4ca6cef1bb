"""Spans beyond the loop's own, received by a real OTLP receiver: MCP calls both ways, knowledge
search and enumerate, the embedding batch, the degraded-search counter and the session append
histogram. A layer that holds no handle opens its span through ``telemetry.current()``."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.config import ConfirmOverMcp
from fisk_ai.knowledge.access import KnowledgeIndex
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.telemetry import DISABLED, Telemetry, TelemetrySettings, current, start
from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.builtin.knowledge import knowledge_source
from tests.agent.conftest import SETTINGS, FakeTool, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.knowledge.conftest import write_corpus
from tests.knowledge.fake_embeddings import CORPUS, FakeEmbeddings, build, settings
from tests.telemetry.receiver import Receiver, attributes


def live(receiver: Receiver, **changes: object) -> Telemetry:
    values: dict[str, object] = {"enabled": True, "endpoint": receiver.endpoint}
    values.update(changes)
    return start(TelemetrySettings(**values))  # type: ignore[arg-type]


def named(receiver: Receiver) -> dict[str, Span]:
    return {span.name: span for span in receiver.spans()}


def test_current_is_the_handle_only_inside_its_spans(receiver: Receiver) -> None:
    handle = live(receiver, no_metrics=True)
    assert current() is DISABLED
    with handle.run("ops"):
        assert current() is handle
    assert current() is DISABLED
    handle.shutdown()


def test_each_call_span_carries_its_conventions(receiver: Receiver) -> None:
    handle = live(receiver)
    with handle.run("ops"):
        with handle.mcp_tool_call("add", server="echo"):
            pass
        with handle.remote_agent("billing", "prompt"):
            pass
        with handle.remote_tool("invoicing", "invoice"):
            pass
        with handle.knowledge_search(5):
            pass
        with handle.knowledge_enumerate():
            pass
        with handle.embedding_batch("fake-1", 3):
            pass
    handle.degraded_search()
    handle.session_append(0.003, "file")
    handle.shutdown()

    spans = named(receiver)
    root = spans["invoke_agent ops"]
    assert all(
        span.parent_span_id == root.span_id for name, span in spans.items() if span is not root
    )
    mcp = attributes(spans["tools/call add"])
    assert spans["tools/call add"].kind == Span.SPAN_KIND_CLIENT
    assert mcp["mcp.method.name"] == "tools/call"
    assert mcp["gen_ai.operation.name"] == "execute_tool"
    assert mcp["gen_ai.tool.name"] == "add"
    assert mcp["fisk.mcp.server"] == "echo"
    agent = attributes(spans["invoke_agent billing"])
    assert (agent["gen_ai.agent.name"], agent["fisk.a2a.request"]) == ("billing", "prompt")
    hop = attributes(spans["invoke_agent invoicing"])
    assert (hop["gen_ai.operation.name"], hop["gen_ai.tool.name"]) == ("invoke_agent", "invoice")
    assert hop["fisk.tool.remote_agent"] == "invoicing"
    assert "gen_ai.agent.name" not in hop
    retrieval = attributes(spans["retrieval knowledge"])
    assert retrieval["gen_ai.operation.name"] == "retrieval"
    assert retrieval["gen_ai.data_source.id"] == "knowledge"
    assert retrieval["gen_ai.request.top_k"] == 5
    # Enumeration is not retrieval: no GenAI operation name on it.
    assert "gen_ai.operation.name" not in attributes(spans["enumerate knowledge"])
    embeddings = attributes(spans["embeddings fake-1"])
    assert embeddings["gen_ai.operation.name"] == "embeddings"
    assert embeddings["gen_ai.request.model"] == "fake-1"
    assert embeddings["fisk.embeddings.inputs"] == 3
    (degraded,) = receiver.metric_points("fisk.knowledge.degraded_searches")
    assert degraded.as_int == 1
    (appended,) = receiver.metric_points("fisk.session.append.duration")
    assert appended.count == 1
    assert {a.key: a.value.string_value for a in appended.attributes} == {
        "fisk.session.backend": "file"
    }


async def test_an_imported_mcp_tool_call_is_a_client_span_in_the_runs_trace(
    receiver: Receiver,
) -> None:
    from fisk_ai.tools.mcp.sessions import open_mcp_sessions
    from tests.mcp.conftest import stdio_entry

    handle = live(receiver, no_metrics=True)
    async with open_mcp_sessions([stdio_entry()]) as sessions:
        (add,) = [tool for tool in sessions.tools if tool.name == "echo_add"]
        with handle.run("ops"):
            outcome = await add.execute('{"a": 2, "b": 3}', ExecDeps())
    handle.shutdown()

    assert outcome.model_content == "5"
    spans = named(receiver)
    called = spans["tools/call add"]
    assert called.parent_span_id == spans["invoke_agent ops"].span_id
    assert attributes(called)["fisk.mcp.server"] == "echo"
    assert "error.type" not in attributes(called)


async def test_a_call_served_by_fisk_mcp_is_a_server_span_over_the_knowledge_search(
    receiver: Receiver, tmp_path: Path
) -> None:
    from mcp import Client

    from fisk_ai.mcpserver.serving import ServeOptions, ToolCalls, build_server, select_mcp_tools

    index = KnowledgeIndex(tmp_path / "knowledge")
    tools = knowledge_source(index, top_k=5, max_injected_tokens=1000).tools
    selection = select_mcp_tools(tools, builtins=frozenset({"knowledge_search"}))
    options = ServeOptions(
        name="docs",
        version="1.0.0",
        tool_timeout=timedelta(seconds=30),
        confirm=ConfirmOverMcp.AUTO,
    )
    handle = live(receiver, no_metrics=True)
    calls = ToolCalls(selection.exposed, options, telemetry=handle)
    async with Client(build_server(calls)) as client:
        await client.call_tool("knowledge_search", {"query": "retention"})
        missing = await client.call_tool("knowledge_nothing", {})
    handle.shutdown()

    assert missing.is_error
    served = [span for span in receiver.spans() if span.name.startswith("tools/call")]
    assert {span.name for span in served} == {
        "tools/call knowledge_search",
        "tools/call knowledge_nothing",
    }
    # Each served call is the root of a trace of its own.
    assert all(span.kind == Span.SPAN_KIND_SERVER and not span.parent_span_id for span in served)
    (search,) = [span for span in served if span.name == "tools/call knowledge_search"]
    (unknown,) = [span for span in served if span.name == "tools/call knowledge_nothing"]
    assert attributes(unknown)["error.type"] == "tool_error"
    retrieval = named(receiver)["retrieval knowledge"]
    assert retrieval.parent_span_id == search.span_id
    assert attributes(retrieval)["fisk.knowledge.status"] == "index_not_built"


async def test_a_call_from_one_agent_to_another_over_mcp_is_one_trace(
    receiver: Receiver, tmp_path: Path
) -> None:
    from mcp import Client

    from fisk_ai.mcpserver.serving import ServeOptions, ToolCalls, build_server, select_mcp_tools
    from fisk_ai.tools.mcp.sessions import request_trace_meta

    index = KnowledgeIndex(tmp_path / "knowledge")
    tools = knowledge_source(index, top_k=5, max_injected_tokens=1000).tools
    selection = select_mcp_tools(tools, builtins=frozenset({"knowledge_search"}))
    options = ServeOptions(
        name="docs",
        version="1.0.0",
        tool_timeout=timedelta(seconds=30),
        confirm=ConfirmOverMcp.AUTO,
    )
    caller, worker = live(receiver, no_metrics=True), live(receiver, no_metrics=True)
    calls = ToolCalls(selection.exposed, options, telemetry=worker)
    async with Client(build_server(calls)) as client:
        with caller.run("ops"), caller.mcp_tool_call("knowledge_search", server="docs"):
            await client.call_tool(
                "knowledge_search", {"query": "retention"}, meta=request_trace_meta()
            )
    caller.shutdown()
    worker.shutdown()

    spans = receiver.spans()
    (sent,) = [span for span in spans if span.kind == Span.SPAN_KIND_CLIENT]
    (served,) = [span for span in spans if span.kind == Span.SPAN_KIND_SERVER]
    assert served.parent_span_id == sent.span_id
    assert len({span.trace_id for span in spans}) == 1
    assert named(receiver)["retrieval knowledge"].parent_span_id == served.span_id


async def test_indexing_embeds_under_a_span_and_a_degraded_search_is_counted(
    receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path, CORPUS)
    store = tmp_path / "store"
    fake = FakeEmbeddings()
    handle = live(receiver)
    try:
        with handle.run("indexer"):
            build(store, Path("ops"), settings(fake.url))
    finally:
        fake.stop()
    index = KnowledgeIndex(store, settings(fake.url))
    search, enumerate_ = knowledge_source(index, top_k=2, max_injected_tokens=1000).tools
    try:
        with handle.run("ops"):
            found = await search.execute('{"query": "restart"}', ExecDeps())
            listed = await enumerate_.execute('{"query": "restart"}', ExecDeps())
    finally:
        index.close()
    handle.shutdown()

    assert "DEGRADED" in json.loads(found.model_content)["tier"]
    assert not listed.is_error
    spans = named(receiver)
    # One batch per changed document, each of its one chunk; then the search's query, which the
    # stopped endpoint never answered.
    batches = [span for span in receiver.spans() if span.name == "embeddings fake-1"]
    assert [attributes(batch)["fisk.embeddings.inputs"] for batch in batches] == [1, 1, 1, 1]
    *indexed, query = batches
    assert {batch.parent_span_id for batch in indexed} == {spans["invoke_agent indexer"].span_id}
    assert query.parent_span_id == spans["retrieval knowledge"].span_id
    assert query.status.code == Status.STATUS_CODE_ERROR
    retrieval = attributes(spans["retrieval knowledge"])
    assert retrieval["fisk.knowledge.degraded"] is True
    assert retrieval["fisk.knowledge.hits"] == 1
    assert attributes(spans["enumerate knowledge"])["fisk.knowledge.documents"] == 1
    (degraded,) = receiver.metric_points("fisk.knowledge.degraded_searches")
    assert degraded.as_int == 1


async def test_every_session_append_of_a_run_is_measured(
    receiver: Receiver, tmp_path: Path
) -> None:
    handle = live(receiver)
    provider = ScriptedProvider([calls(call("t1", "status")), answer("done")])
    store = FileSessionStore(tmp_path / "runs")
    resources = Resources(SETTINGS, provider, toolset(FakeTool("status")), store, telemetry=handle)
    async with Runner(resources, events=RecordingSink()) as runner:
        result = await runner.start("status please")
    handle.shutdown()

    records = await store.read(result.session_id)
    # Record 1 is written by create; every later one is an append the run measured.
    (appended,) = receiver.metric_points("fisk.session.append.duration")
    assert appended.count == len(records) - 1 > 0
    assert appended.sum > 0
