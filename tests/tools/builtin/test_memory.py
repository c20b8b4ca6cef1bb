import json
from typing import Any

import pytest

from fisk_ai.agent.events import ToolCallEvent
from fisk_ai.memory import Scope, using_scope
from fisk_ai.presentation import tool_call_line
from fisk_ai.tools.base import ExecDeps, Kind, Presentation, ShowsCommand, Tool
from fisk_ai.tools.builtin.memory import (
    MEMORY_TOOL_NAMES,
    MemoryDelete,
    MemoryList,
    MemoryRead,
    MemoryWrite,
    memory_source,
    memory_tools,
)
from fisk_ai.tools.prepared import prepare_call
from tests.fakes.memory import FakeMemoryStore

DEPS = ExecDeps()


def args(**values: object) -> str:
    return json.dumps(values)


def decoded(output: str) -> Any:
    return json.loads(output)


@pytest.fixture
def store() -> FakeMemoryStore:
    return FakeMemoryStore()


async def test_list_gives_keys_and_descriptions_sorted(store: FakeMemoryStore) -> None:
    store.put("zeta", "last", "z")
    store.put("alpha", "first", "a")

    outcome = await MemoryList(store).execute("", DEPS)

    assert not outcome.is_error
    assert decoded(outcome.output) == {
        "memories": [
            {"key": "alpha", "description": "first"},
            {"key": "zeta", "description": "last"},
        ]
    }


async def test_an_empty_list_is_an_empty_array(store: FakeMemoryStore) -> None:
    outcome = await MemoryList(store).execute("null", DEPS)
    assert outcome.output == '{"memories":[]}'


async def test_read_returns_the_whole_memory(store: FakeMemoryStore) -> None:
    store.put("build.notes", "How to build", "make all")

    outcome = await MemoryRead(store).execute(args(key="build.notes"), DEPS)

    assert decoded(outcome.output) == {
        "found": True,
        "key": "build.notes",
        "description": "How to build",
        "content": "make all",
    }


async def test_reading_a_missing_key_is_not_found_with_a_reason(store: FakeMemoryStore) -> None:
    outcome = await MemoryRead(store).execute(args(key="nope"), DEPS)

    assert not outcome.is_error
    assert decoded(outcome.output) == {
        "found": False,
        "reason": 'no memory is stored under key "nope"; call memory_list for the current set',
    }


async def test_write_creates_a_memory(store: FakeMemoryStore) -> None:
    outcome = await MemoryWrite(store).execute(
        args(key="k", description="what it is", content="body"), DEPS
    )

    assert (outcome.output, outcome.is_error) == ('{"written":true}', False)
    assert store.memories["k"][:2] == ("what it is", "body")


async def test_writing_a_taken_key_names_the_memory_already_there(
    store: FakeMemoryStore,
) -> None:
    store.put("k", "the deploy checklist", "old")

    outcome = await MemoryWrite(store).execute(
        args(key="k", description="something else", content="new"), DEPS
    )

    result = decoded(outcome.output)
    assert not outcome.is_error and result["written"] is False
    assert 'key "k" (described as "the deploy checklist")' in result["reason"]
    assert "overwrite: true" in result["reason"]
    assert store.memories["k"][1] == "old"


async def test_an_overwrite_without_a_read_is_stale_and_says_to_read_first(
    store: FakeMemoryStore,
) -> None:
    store.put("k", "d", "old")

    with using_scope(Scope()):
        outcome = await MemoryWrite(store).execute(
            args(key="k", description="d", content="new", overwrite=True), DEPS
        )

    result = decoded(outcome.output)
    assert result["written"] is False
    assert "read it first with memory_read" in result["reason"]
    assert "retry memory_write with overwrite: true" in result["reason"]
    assert store.memories["k"][1] == "old"


async def test_an_overwrite_after_a_read_in_the_same_conversation_is_written(
    store: FakeMemoryStore,
) -> None:
    store.put("k", "d", "old")

    with using_scope(Scope()):
        await MemoryRead(store).execute(args(key="k"), DEPS)
        outcome = await MemoryWrite(store).execute(
            args(key="k", description="d", content="new", overwrite=True), DEPS
        )

    assert outcome.output == '{"written":true}'
    assert store.memories["k"][1] == "new"


async def test_one_conversations_read_never_authorizes_anothers_overwrite(
    store: FakeMemoryStore,
) -> None:
    store.put("k", "d", "old")
    with using_scope(Scope()):
        await MemoryRead(store).execute(args(key="k"), DEPS)

    with using_scope(Scope()):
        outcome = await MemoryWrite(store).execute(
            args(key="k", description="d", content="new", overwrite=True), DEPS
        )

    assert decoded(outcome.output)["written"] is False


async def test_a_full_store_refuses_a_write_cleanly(
    store: FakeMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("fisk_ai.memory.store.MAX_ENTRIES", 1)
    store.put("a", "d", "c")

    outcome = await MemoryWrite(store).execute(args(key="b", description="d", content="c"), DEPS)

    result = decoded(outcome.output)
    assert not outcome.is_error and result["written"] is False
    assert "limit of 1" in result["reason"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (MemoryRead, {"key": "a/b"}),
        (MemoryDelete, {"key": "..."}),
        (MemoryWrite, {"key": "with space", "description": "d", "content": "c"}),
        (MemoryWrite, {"key": "k", "description": " ", "content": "c"}),
        (MemoryWrite, {"key": "k", "description": "d", "content": "x" * 70_000}),
    ],
)
async def test_invalid_input_is_an_error_result(
    store: FakeMemoryStore, tool: type[MemoryRead], arguments: dict[str, object]
) -> None:
    outcome = await tool(store).execute(json.dumps(arguments), DEPS)

    assert outcome.is_error
    assert outcome.output.startswith(f'tool "{tool.name}": ')
    assert store.memories == {}


async def test_a_missing_required_argument_is_an_error_result(store: FakeMemoryStore) -> None:
    outcome = await MemoryWrite(store).execute(args(key="k"), DEPS)
    assert outcome.is_error and "description" in outcome.output


async def test_a_failing_store_is_an_error_result(store: FakeMemoryStore) -> None:
    store.failure = "could not list memories in memory bucket agent-memory (timeout)"

    outcome = await MemoryList(store).execute("{}", DEPS)

    assert outcome.is_error
    assert "memory bucket agent-memory" in outcome.output


async def test_delete_says_whether_there_was_a_memory(store: FakeMemoryStore) -> None:
    store.put("k", "d", "c")
    tool = MemoryDelete(store)

    assert (await tool.execute(args(key="k"), DEPS)).output == '{"deleted":true}'
    assert (await tool.execute(args(key="k"), DEPS)).output == '{"deleted":false}'


def test_read_only_withholds_the_writers(store: FakeMemoryStore) -> None:
    assert [tool.name for tool in memory_tools(store)] == list(MEMORY_TOOL_NAMES)
    assert [tool.name for tool in memory_tools(store, read_only=True)] == [
        "memory_list",
        "memory_read",
    ]
    assert memory_source(store).label == "harness.memory"


def test_the_tools_are_builtin_traced_never_exposed_nor_deferred(store: FakeMemoryStore) -> None:
    for tool in memory_tools(store):
        assert isinstance(tool, Tool)
        assert tool.kind is Kind.BUILTIN and tool.presentation is Presentation.TRACED
        assert not tool.mcp_exposable and not tool.a2a_exposable
        assert tool.definition(defer_loading=True).defer_loading is False
        assert tool.input_schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("tool", "arguments", "line"),
    [
        (MemoryRead, {"key": "build.notes"}, "-> memory_read build.notes"),
        (
            MemoryWrite,
            {"key": "build.notes", "description": "d", "content": "a long body\nof text"},
            "-> memory_write build.notes",
        ),
        (MemoryDelete, {"key": "old"}, "-> memory_delete old"),
        (MemoryList, {}, "-> memory_list"),
    ],
)
def test_a_call_is_traced_as_the_tool_and_its_key(
    store: FakeMemoryStore, tool: type[MemoryRead], arguments: dict[str, object], line: str
) -> None:
    instance = tool(store)
    assert isinstance(instance, ShowsCommand)
    prepared = prepare_call(instance, json.dumps(arguments), call_id="c1")
    event = ToolCallEvent("c1", instance.name, prepared.arguments, prepared.argv)

    assert tool_call_line(event) == line
    assert instance.display(json.dumps(arguments)) == line.removeprefix("-> ")
