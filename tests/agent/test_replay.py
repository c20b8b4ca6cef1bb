"""Replaying a stored conversation: whole turns, a cap, no orphaned results, and the blocks the
live run sent."""

import dataclasses

from fisk_ai.agent.events import (
    Event,
    PromptEvent,
    StatusEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from fisk_ai.agent.replay import conversation_events, replay_window
from fisk_ai.sessions import Conversation, fold
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.tools.base import ExecRecord, Outcome, Tool
from fisk_ai.tools.toolset import ToolSet
from tests.agent.conftest import SETTINGS, FakeTool, folded, make_runner, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.sessions.builders import journal, result, turn


def turn_events(name: str, calls: int) -> list[Event]:
    events: list[Event] = [PromptEvent(name)]
    for index in range(calls):
        events.append(ToolCallEvent(f"{name}{index}", "tool", {}))
        events.append(ToolResultEvent(f"{name}{index}", "out"))
    events.append(TextEvent(f"{name} answered"))
    return events


def test_a_cut_inside_a_turn_widens_to_the_whole_turn() -> None:
    turns = [turn_events("a", 1), turn_events("b", 1)]
    window = replay_window(turns, wanted=2, cap=200)
    assert window.events == tuple(turns[1])
    assert window.truncated


def test_everything_fits_when_asked_for_more_than_there_is() -> None:
    turns = [turn_events("a", 1), turn_events("b", 1)]
    window = replay_window(turns, wanted=50, cap=200)
    assert len(window.events) == 8
    assert not window.truncated


def test_a_turn_longer_than_the_cap_keeps_its_latest_events_without_orphans() -> None:
    turns = [turn_events("a", 10)]
    window = replay_window(turns, wanted=200, cap=4)
    calls = {e.id for e in window.events if isinstance(e, ToolCallEvent)}
    results = {e.call_id for e in window.events if isinstance(e, ToolResultEvent)}
    assert len(window.events) <= 4
    assert results <= calls
    assert window.events[-1] == TextEvent("a answered")


def test_a_stored_conversation_reads_back_in_journal_order() -> None:
    conversation = fold(journal(turn(1, "tu_1", text="looking"), result("tu_1", "found it")))
    events = conversation_events(conversation)
    assert events[0] == PromptEvent("report on the ORDERS stream")
    assert events[1] == TextEvent("looking")
    assert isinstance(events[2], ToolCallEvent) and events[2].id == "tu_1"
    assert events[3] == ToolResultEvent("tu_1", "found it")


def live_blocks(sink: RecordingSink) -> list[Event]:
    """What a live run sent that a replay can send again: no status or warnings, and thinking
    without the signature that never leaves the worker."""
    kept: list[Event] = []
    for event in sink.events:
        if isinstance(event, StatusEvent | WarningEvent):
            continue
        kept.append(ThinkingEvent(event.text) if isinstance(event, ThinkingEvent) else event)
    return kept


def replayed_blocks(conversation: Conversation, tools: ToolSet | None = None) -> list[Event]:
    return [e for e in conversation_events(conversation, tools) if not isinstance(e, PromptEvent)]


async def test_a_replay_sends_the_blocks_the_live_run_sent(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    tools = toolset(*app_tools, FakeTool("lookup"))
    provider = ScriptedProvider(
        [
            calls(
                call("t1", "status"),
                call("t2", "lookup", {"ratio": 1.50}),
                call("t3", "stream_rm", {"stream": "ORDERS"}),
                text="checking",
                thinking="hmm",
            ),
            answer("searching", stop_reason="pause_turn"),
            answer("all good"),
        ]
    )
    async with make_runner(provider=provider, tools=tools, store=store, events=sink) as runner:
        result = await runner.start("go")

    assert replayed_blocks(await folded(store, result.session_id), tools) == live_blocks(sink)


async def test_a_chat_replays_each_turn_as_it_ran(
    store: FileSessionStore, sink: RecordingSink, app_tools: tuple[Tool, ...]
) -> None:
    tools = toolset(*app_tools)
    provider = ScriptedProvider(
        [answer("hello"), calls(call("t1", "status"), text="looking"), answer("fine")]
    )
    chat = dataclasses.replace(SETTINGS, interactive=True)
    async with make_runner(
        provider=provider, tools=tools, store=store, events=sink, settings=chat
    ) as runner:
        result = await runner.start("hi")
        await runner.follow_up("how is it")

    assert replayed_blocks(await folded(store, result.session_id), tools) == live_blocks(sink)


async def test_a_reply_the_run_ended_in_error_is_not_replayed_as_the_answer(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider([answer("I cannot help with that", stop_reason="refusal")])
    async with make_runner(provider=provider, tools=toolset(), store=store, events=sink) as runner:
        result = await runner.start("go")

    replayed = replayed_blocks(await folded(store, result.session_id))
    assert replayed == [TextEvent("I cannot help with that")] == live_blocks(sink)


async def test_a_refusal_earlier_in_a_chat_is_not_replayed_as_an_answer(
    store: FileSessionStore, sink: RecordingSink
) -> None:
    provider = ScriptedProvider(
        [answer("I cannot help with that", stop_reason="refusal"), answer("here it is")]
    )
    chat = dataclasses.replace(SETTINGS, interactive=True)
    async with make_runner(
        provider=provider, tools=toolset(), store=store, events=sink, settings=chat
    ) as runner:
        result = await runner.start("go")
        await runner.follow_up("try again")

    replayed = replayed_blocks(await folded(store, result.session_id))
    assert replayed == live_blocks(sink)
    assert replayed == [TextEvent("I cannot help with that"), TextEvent("here it is", final=True)]


def test_a_command_result_replays_its_output_and_exec_record() -> None:
    envelope = Outcome("3 streams\n", exec=ExecRecord("stream ls", 1, truncated=True))
    conversation = fold(journal(turn(1, "tu_1"), result("tu_1", envelope.model_content)))

    [replayed] = [e for e in conversation_events(conversation) if isinstance(e, ToolResultEvent)]

    assert replayed == ToolResultEvent("tu_1", "3 streams\n", exec=envelope.exec)


def test_output_that_only_looks_like_a_command_result_is_replayed_whole() -> None:
    lookalike = '{"command": "stream ls", "exit_code": 0, "output": "x"}'
    conversation = fold(journal(turn(1, "tu_1"), result("tu_1", lookalike)))

    [replayed] = [e for e in conversation_events(conversation) if isinstance(e, ToolResultEvent)]

    assert replayed == ToolResultEvent("tu_1", lookalike)


def test_without_a_tool_set_a_call_carries_no_argument_vector() -> None:
    conversation = fold(journal(turn(1, "tu_1"), result("tu_1")))

    [replayed] = [e for e in conversation_events(conversation) if isinstance(e, ToolCallEvent)]

    assert replayed.command == ()


def test_without_a_tool_set_a_command_call_shows_the_line_its_result_records() -> None:
    envelope = Outcome("gone\n", exec=ExecRecord("stream rm -- ORDERS", 0)).model_content
    conversation = fold(journal(turn(1, "tu_1"), result("tu_1", envelope)))

    [replayed] = [e for e in conversation_events(conversation) if isinstance(e, ToolCallEvent)]

    assert replayed.display == "stream rm -- ORDERS"


def test_each_result_follows_the_call_it_answers() -> None:
    conversation = fold(journal(turn(1, "a", "b"), result("a"), result("b")))

    ids = [
        (type(e).__name__, e.id if isinstance(e, ToolCallEvent) else e.call_id)
        for e in conversation_events(conversation)
        if isinstance(e, ToolCallEvent | ToolResultEvent)
    ]

    assert ids == [
        ("ToolCallEvent", "a"),
        ("ToolResultEvent", "a"),
        ("ToolCallEvent", "b"),
        ("ToolResultEvent", "b"),
    ]
