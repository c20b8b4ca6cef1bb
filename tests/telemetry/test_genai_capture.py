"""Token usage and captured content as the GenAI semantic conventions define them, read off a
real agent run exported to the OTLP receiver."""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.llm.types import (
    Message,
    Response,
    Role,
    TextBlock,
    ThinkingBlock,
    Usage,
)
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.telemetry import TelemetrySettings, start
from fisk_ai.telemetry.genai import messages_document
from tests.agent.conftest import SETTINGS, FakeTool, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call
from tests.telemetry.receiver import Receiver, attributes

SIGNATURE = b"opaque-provider-signature"
CACHED_USAGE = Usage(
    input_tokens=1234, output_tokens=116, cache_read_tokens=700, cache_create_tokens=300
)


def thinking_call() -> Response:
    """A reply that reasons (with a signature), narrates and calls ``status``."""
    content = (
        ThinkingBlock("the status tool knows", SIGNATURE),
        TextBlock("Asking the status tool."),
        call("t1", "status", {"stream": "ORDERS"}),
    )
    return Response(Message(Role.ASSISTANT, content), "tool_use", CACHED_USAGE)


async def exported_run(
    receiver: Receiver, tmp_path: Path, *replies: Response, system: str = "", **capture: Any
) -> list[Any]:
    telemetry = start(
        TelemetrySettings(enabled=True, endpoint=receiver.endpoint, no_metrics=True, **capture)
    )
    resources = Resources(
        replace(SETTINGS, system_prompt=system),
        ScriptedProvider(list(replies), provider="anthropic"),
        toolset(FakeTool("status")),
        FileSessionStore(tmp_path / "runs"),
        telemetry=telemetry,
    )
    async with Runner(resources, events=RecordingSink()) as runner:
        await runner.start("status please")
    telemetry.shutdown()
    return [span for span in receiver.spans() if span.name.startswith("chat ")]


def captured(span: Any, key: str) -> Any:
    return json.loads(str(attributes(span)[key]))


async def test_input_tokens_include_both_cache_tiers_with_the_tiers_beside_them(
    receiver: Receiver, tmp_path: Path
) -> None:
    first, _ = await exported_run(receiver, tmp_path, thinking_call(), answer("done"))

    chat = attributes(first)
    assert chat["gen_ai.usage.input_tokens"] == 1234 + 700 + 300
    assert chat["gen_ai.usage.cache_read.input_tokens"] == 700
    assert chat["gen_ai.usage.cache_creation.input_tokens"] == 300
    assert chat["fisk.llm.uncached_input_tokens"] == 1234


async def test_the_root_span_carries_the_turns_token_totals(
    receiver: Receiver, tmp_path: Path
) -> None:
    await exported_run(receiver, tmp_path, thinking_call(), answer("done", tokens=10))

    (root,) = [span for span in receiver.spans() if span.name.startswith("invoke_agent")]
    totals = attributes(root)
    assert totals["gen_ai.usage.input_tokens"] == 1234 + 700 + 300 + 10
    assert totals["gen_ai.usage.cache_read.input_tokens"] == 700
    assert totals["gen_ai.usage.output_tokens"] == 116 + 10


async def test_captured_messages_are_in_the_conventions_parts_shape(
    receiver: Receiver, tmp_path: Path
) -> None:
    first, second = await exported_run(
        receiver, tmp_path, thinking_call(), answer("done"), capture=True
    )

    assert captured(first, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "status please"}]}
    ]
    assert captured(first, "gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "the status tool knows"},
                {"type": "text", "content": "Asking the status tool."},
                {
                    "type": "tool_call",
                    "id": "t1",
                    "name": "status",
                    "arguments": {"stream": "ORDERS"},
                },
            ],
            "finish_reason": "tool_use",
        }
    ]
    (answered,) = captured(second, "gen_ai.input.messages")
    assert answered["role"] == "tool"
    assert [(part["type"], part["id"]) for part in answered["parts"]] == [
        ("tool_call_response", "t1")
    ]


async def test_the_thinking_signature_never_leaves_the_process(
    receiver: Receiver, tmp_path: Path
) -> None:
    await exported_run(
        receiver,
        tmp_path,
        thinking_call(),
        answer("done"),
        capture=True,
        capture_full_messages=True,
    )

    exported = b"".join(request.SerializeToString() for request in receiver.traces)
    assert b"the status tool knows" in exported
    assert b"signature" not in exported
    assert SIGNATURE not in exported
    assert b"b3BhcXVl" not in exported  # the signature's base64, as the journal stores it


async def test_system_instructions_ride_on_the_first_model_call_of_a_turn(
    receiver: Receiver, tmp_path: Path
) -> None:
    first, second = await exported_run(
        receiver,
        tmp_path,
        thinking_call(),
        answer("done"),
        system="You look after the ORDERS stream.",
        capture=True,
    )

    instructions = captured(first, "gen_ai.system_instructions")
    assert {"type": "text", "content": "You look after the ORDERS stream."} in instructions
    assert "gen_ai.system_instructions" not in attributes(second)


def journal(*messages: tuple[str, list[dict[str, Any]]]) -> str:
    return json.dumps([{"role": role, "content": content} for role, content in messages])


def test_trimming_keeps_the_newest_messages_whole() -> None:
    conversation = journal(
        ("user", [{"text": {"text": "first " * 40}}]),
        ("assistant", [{"text": {"text": "second " * 10}}]),
        ("user", [{"text": {"text": "third"}}]),
    )

    document = messages_document(conversation, max_bytes=200)

    kept = json.loads(document.text)
    assert [message["parts"][0]["content"] for message in kept] == ["second " * 10, "third"]
    assert len(document.text.encode()) <= 200
    assert (document.truncated, document.dropped_messages) == (True, 1)


def test_trimming_drops_tool_responses_whose_calls_were_dropped() -> None:
    conversation = journal(
        ("assistant", [{"tool_use": {"id": "t1", "name": "status", "input": {"x": "y" * 200}}}]),
        ("user", [{"tool_result": {"tool_use_id": "t1", "content": "ok"}}]),
        ("user", [{"text": {"text": "and now?"}}]),
    )

    document = messages_document(conversation, max_bytes=120)

    assert json.loads(document.text) == [
        {"role": "user", "parts": [{"type": "text", "content": "and now?"}]}
    ]
    assert document.dropped_messages == 2


def test_a_newest_message_over_the_budget_is_shortened_and_still_parses() -> None:
    conversation = journal(("user", [{"text": {"text": '<"quoted"> ' * 200}}]))

    document = messages_document(conversation, max_bytes=300)

    (message,) = json.loads(document.text)
    assert message["parts"][0]["content"].startswith('<"quoted"> ')
    assert "raise telemetry.capture.max_bytes" in message["parts"][0]["content"]
    assert len(document.text.encode()) <= 300
