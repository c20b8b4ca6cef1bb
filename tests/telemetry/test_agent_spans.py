import json
from pathlib import Path

from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.telemetry import TelemetrySettings, start
from tests.agent.conftest import SETTINGS, FakeTool, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.telemetry.receiver import Receiver, attributes

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def test_a_run_is_one_trace_of_its_model_and_tool_calls(
    receiver: Receiver, tmp_path: Path
) -> None:
    telemetry = start(TelemetrySettings(enabled=True, endpoint=receiver.endpoint, no_metrics=True))
    provider = ScriptedProvider([calls(call("t1", "status")), answer("done")], provider="anthropic")
    resources = Resources(
        SETTINGS,
        provider,
        toolset(FakeTool("status")),
        FileSessionStore(tmp_path / "runs"),
        telemetry=telemetry,
    )
    async with Runner(resources, events=RecordingSink(), traceparent=PARENT) as runner:
        await runner.start("status please")
    delivery = telemetry.shutdown()

    spans = receiver.spans()
    assert delivery.delivered == len(spans) == 4
    assert {span.trace_id.hex() for span in spans} == {"4bf92f3577b34da6a3ce929d0e0e4736"}
    (root,) = [span for span in spans if span.name.startswith("invoke_agent")]
    assert root.parent_span_id.hex() == "00f067aa0ba902b7"
    chats = [span for span in spans if span.name == "chat test-model"]
    assert [attributes(chat)["gen_ai.provider.name"] for chat in chats] == ["anthropic"] * 2
    assert [attributes(chat)["gen_ai.response.finish_reasons"] for chat in chats] == [
        ("tool_use",),
        ("end_turn",),
    ]
    (tool,) = [span for span in spans if span.name == "execute_tool status"]
    assert tool.parent_span_id == root.span_id
    assert "gen_ai.tool.call.arguments" not in attributes(tool)


async def captured_inputs(receiver: Receiver, tmp_path: Path, *, full: bool) -> list[list[str]]:
    """The roles of the messages each chat span of a two-call run carries as its input."""
    telemetry = start(
        TelemetrySettings(
            enabled=True,
            endpoint=receiver.endpoint,
            no_metrics=True,
            capture=True,
            capture_full_messages=full,
        )
    )
    provider = ScriptedProvider([calls(call("t1", "status")), answer("done")])
    resources = Resources(
        SETTINGS,
        provider,
        toolset(FakeTool("status")),
        FileSessionStore(tmp_path / "runs"),
        telemetry=telemetry,
    )
    async with Runner(resources, events=RecordingSink()) as runner:
        await runner.start("status please")
    telemetry.shutdown()
    chats = [span for span in receiver.spans() if span.name == "chat test-model"]
    inputs = [json.loads(str(attributes(chat)["gen_ai.input.messages"])) for chat in chats]
    outputs = [json.loads(str(attributes(chat)["gen_ai.output.messages"])) for chat in chats]
    assert [[message["role"] for message in output] for output in outputs] == [
        ["assistant"],
        ["assistant"],
    ]
    return [[message["role"] for message in sent] for sent in inputs]


async def test_captured_messages_by_default_are_what_each_call_adds(
    receiver: Receiver, tmp_path: Path
) -> None:
    # The second call carries the reply and the tool result; only the result is new to it,
    # and a message of tool results alone takes the conventions' tool role.
    assert await captured_inputs(receiver, tmp_path, full=False) == [["user"], ["tool"]]


async def test_captured_messages_full_are_every_message_of_each_call(
    receiver: Receiver, tmp_path: Path
) -> None:
    assert await captured_inputs(receiver, tmp_path, full=True) == [
        ["user"],
        ["user", "assistant", "tool"],
    ]
