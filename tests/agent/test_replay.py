"""Replaying a stored conversation: whole turns, a cap, and no orphaned results."""

from fisk_ai.agent.events import Event, PromptEvent, TextEvent, ToolCallEvent, ToolResultEvent
from fisk_ai.agent.replay import conversation_events, replay_window
from fisk_ai.sessions import fold
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
