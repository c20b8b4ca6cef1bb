from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.llm.types import ToolResultBlock
from fisk_ai.sessions import (
    Deferred,
    DeferredAnswerRefused,
    FileSessionStore,
    Payload,
    Terminal,
    TerminalReason,
    ToolResult,
    answer_deferred,
    fold,
)
from tests.sessions.builders import meta, result, turn

SUSPENDED = Terminal(TerminalReason.SUSPENDED)


@pytest.fixture
def store(tmp_path: Path) -> FileSessionStore:
    return FileSessionStore(tmp_path / "runs")


async def stored_session(store: FileSessionStore, *payloads: Payload) -> None:
    async with await store.create("run-1", meta("run-1")) as journal:
        for payload in payloads:
            await journal.append(payload)


async def test_an_answer_is_journaled_as_one_tool_result(store: FileSessionStore) -> None:
    await stored_session(store, turn(1, "a", "b"), result("a"), Deferred("b", "tool_b"), SUSPENDED)
    before = await store.read("run-1")

    record = await answer_deferred(store, "run-1", "b", "approved by CAB", is_error=False)

    after = await store.read("run-1")
    assert after[: len(before)] == before
    assert after[len(before) :] == [record]
    assert record.payload == ToolResult(ToolResultBlock("b", "approved by CAB"))


async def test_an_answered_deferral_leaves_an_ordinary_resume(store: FileSessionStore) -> None:
    await stored_session(store, turn(1, "a"), Deferred("a", "tool_a"), SUSPENDED)

    await answer_deferred(store, "run-1", "a", "rejected", is_error=True)

    conversation = fold(await store.read("run-1"))
    assert conversation.deferred == ()
    assert conversation.pending_turn is None
    assert conversation.messages[-1].content == (ToolResultBlock("a", "rejected", True),)


async def test_a_second_answer_is_refused_as_already_answered(store: FileSessionStore) -> None:
    await stored_session(store, turn(1, "a"), Deferred("a", "tool_a"), SUSPENDED)
    await answer_deferred(store, "run-1", "a", "first")
    before = await store.read("run-1")

    with pytest.raises(DeferredAnswerRefused, match="call a of session run-1 was already answered"):
        await answer_deferred(store, "run-1", "a", "second")
    assert await store.read("run-1") == before


async def test_an_unknown_call_is_refused(store: FileSessionStore) -> None:
    await stored_session(store, turn(1, "a"), Deferred("a", "tool_a"), SUSPENDED)

    with pytest.raises(DeferredAnswerRefused, match="not waiting on call zzz"):
        await answer_deferred(store, "run-1", "zzz", "whatever")


async def test_a_call_that_never_deferred_is_refused(store: FileSessionStore) -> None:
    await stored_session(store, turn(1, "a", "b"), Deferred("b", "tool_b"), SUSPENDED)

    with pytest.raises(DeferredAnswerRefused, match="not waiting on call a"):
        await answer_deferred(store, "run-1", "a", "whatever")


async def test_a_refusal_takes_no_lock(store: FileSessionStore) -> None:
    await stored_session(store, turn(1, "a"), Deferred("a", "tool_a"), SUSPENDED)

    async with await store.open("run-1"):
        with pytest.raises(DeferredAnswerRefused):
            await answer_deferred(store, "run-1", "zzz", "whatever")
