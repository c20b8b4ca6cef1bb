from __future__ import annotations

import json

import pytest

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.events import event_from_message, event_message
from fisk_ai.a2a.messages import (
    AgentCallBody,
    EventAgentCall,
    EventMessage,
    reply_header,
    reply_to,
)
from fisk_ai.a2a.vocabulary import Direction, ProtocolId
from fisk_ai.agent.events import (
    Event,
    PromptEvent,
    StatusEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
    WarningKind,
)
from fisk_ai.llm.types import Usage
from fisk_ai.tools.base import ExecRecord
from tests.a2a.samples import AGENT, PROMPT

EVERY_EVENT: list[Event] = [
    TextEvent("the stream is gone", final=True),
    TextEvent("looking"),
    ThinkingEvent("hm", signature="c2ln", provider="anthropic"),
    ToolCallEvent(
        "toolu_1",
        "stream_rm",
        {"stream": "ORDERS", "force": True},
        command=("stream", "rm", "ORDERS", "--force"),
    ),
    ToolCallEvent("toolu_2", "ask_human_confirm", {"question": "ok?"}),
    ToolResultEvent("toolu_1", "removed", exec=ExecRecord("stream rm ORDERS --force", 0)),
    ToolResultEvent("toolu_2", "no operator", is_error=True),
    ToolResultEvent("toolu_3", "stopped after 1s", is_error=True, timed_out=True),
    StatusEvent(iteration=3, phase="calling-llm", usage=Usage(10, 20, 30, 40, 5)),
    StatusEvent(phase="replay_end", count=12, truncated=True),
    StatusEvent(iteration=2, phase="retrying", attempt=2, attempts=3, wait_seconds=2.5),
    WarningEvent(WarningKind.TOOLS_SENT_DIRECTLY, name="llm.no_tool_search", count=40),
    WarningEvent("from_a_newer_peer", params=("a", "b"), error="boom"),
    PromptEvent("how many streams are there"),
]

KIND_OF: dict[type, ProtocolId] = {
    TextEvent: ProtocolId.EVENT_TEXT,
    ThinkingEvent: ProtocolId.EVENT_THINKING,
    ToolCallEvent: ProtocolId.EVENT_TOOL_CALL,
    ToolResultEvent: ProtocolId.EVENT_TOOL_RESULT,
    StatusEvent: ProtocolId.EVENT_STATUS,
    WarningEvent: ProtocolId.EVENT_WARNING,
    PromptEvent: ProtocolId.EVENT_PROMPT,
}


def framed(event: Event, sequence: int = 2) -> EventMessage:
    """``event`` as message ``sequence`` of the reply set to PROMPT."""
    return event_message(event, reply_header(PROMPT, sender=AGENT, sequence=sequence))


@pytest.mark.parametrize("event", EVERY_EVENT, ids=lambda event: type(event).__name__)
def test_every_loop_event_crosses_the_wire_unchanged(event: Event) -> None:
    message = framed(event)

    received = decode(encode(message), direction=Direction.TO_CALLER)

    assert received.protocol == KIND_OF[type(event)]
    assert event_from_message(received) == event  # type: ignore[arg-type]


def test_an_event_message_is_a_reply_in_the_requests_set() -> None:
    message = framed(TextEvent("hi"), 7)

    assert (message.request, message.sequence) == (PROMPT.request, 7)
    assert message.recipient == PROMPT.sender


def test_a_tool_calls_command_line_travels_as_argv_beside_the_upstream_fields() -> None:
    event = ToolCallEvent("toolu_1", "stream_rm", {"stream": "ORDERS"}, command=("stream", "rm"))

    block = json.loads(encode(framed(event)))["block"]

    assert block == {
        "id": "toolu_1",
        "name": "stream_rm",
        "input": {"stream": "ORDERS"},
        "argv": ["stream", "rm"],
    }


def test_a_timed_out_result_says_so_beside_the_upstream_fields() -> None:
    event = ToolResultEvent("toolu_1", "stopped after 1s", is_error=True, timed_out=True)

    block = json.loads(encode(framed(event)))["block"]

    assert block == {
        "call_id": "toolu_1",
        "is_error": True,
        "output": "stopped after 1s",
        "timed_out": True,
    }


def test_a_result_in_time_sends_the_bytes_a_go_peer_sends() -> None:
    event = ToolResultEvent("toolu_1", "no such stream", is_error=True)

    block = json.loads(encode(framed(event)))["block"]

    assert block == {"call_id": "toolu_1", "is_error": True, "output": "no such stream"}


def test_a_tool_call_from_a_peer_without_argv_shows_its_tool_name() -> None:
    event = ToolCallEvent("toolu_1", "stream_rm", {})
    data = encode(framed(event))

    received = event_from_message(decode(data, direction=Direction.TO_CALLER))  # type: ignore[arg-type]

    assert isinstance(received, ToolCallEvent)
    assert received.display == "stream_rm"


def test_status_usage_is_sent_with_cached_input_counted_in_input_tokens() -> None:
    event = StatusEvent(iteration=1, usage=Usage(input_tokens=5, cache_read_tokens=100))

    block = json.loads(encode(framed(event)))["block"]

    assert block["usage"] == {"input_tokens": 105, "cache_read_tokens": 100}


def test_an_agent_call_has_no_loop_event() -> None:
    message = reply_to(
        PROMPT,
        EventAgentCall,
        sender=AGENT,
        sequence=2,
        block=AgentCallBody(id="c1", name="db-agent", task="sub1"),
    )

    assert event_from_message(message) is None


def test_an_unknown_event_kind_has_no_loop_event() -> None:
    data = encode(framed(TextEvent("hi")))
    data = data.replace(b"event.text", b"event.citation")

    assert event_from_message(decode(data, direction=Direction.TO_CALLER)) is None  # type: ignore[arg-type]
