"""What `fisk run` exports is accepted by a real collector: rotel's `rotel-agent` (shipped inside
the rotel wheel) receives it over OTLP/HTTP and forwards it, re-encoded, over OTLP/HTTP to the
in-process receiver, which decodes it with the OpenTelemetry proto classes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.telemetry.cowsay_runs import cowsay_config, joke
from tests.telemetry.receiver import Receiver, attributes
from tests.telemetry.rotel_collector import Collector

pytestmark = pytest.mark.e2e


def test_a_runs_spans_and_token_usage_reach_the_receiver_through_rotel(
    rotel: Collector, receiver: Receiver, tmp_path: Path
) -> None:
    config = cowsay_config(
        tmp_path, f"\ntelemetry:\n  enabled: true\n  endpoint: {rotel.endpoint}\n"
    )
    ran = joke(tmp_path, config)
    assert ran.returncode == 0, ran.stderr
    rotel.stop()
    assert rotel.process.returncode == 0, rotel.log

    exported = receiver.spans()
    assert f"telemetry: {len(exported)} of {len(exported)} spans delivered" in (
        ran.stderr.splitlines()
    )
    # Startup is the process's own trace; the turn is one trace of its own.
    (startup,) = [span for span in exported if span.name == "startup cowsay"]
    spans = [span for span in exported if span is not startup]
    assert len({span.trace_id for span in spans}) == 1
    (root,) = [span for span in spans if span.name == "invoke_agent cowsay"]
    assert attributes(root)["gen_ai.operation.name"] == "invoke_agent"
    chats = [span for span in spans if span.name == "chat claude-haiku-4-5"]
    assert chats
    for chat in chats:
        described = attributes(chat)
        assert described["gen_ai.provider.name"] == "anthropic"
        assert described["gen_ai.request.model"] == "claude-haiku-4-5"
        assert int(described["gen_ai.usage.input_tokens"]) > 0
        assert chat.parent_span_id == root.span_id
    assert attributes(chats[0])["gen_ai.response.finish_reasons"] == ("tool_use",)
    tools = [span for span in spans if span.name.startswith("execute_tool ")]
    assert {attributes(tool)["gen_ai.tool.name"] for tool in tools} >= {"say"}
    assert all(tool.parent_span_id == root.span_id for tool in tools)

    tokens = receiver.metric_points("gen_ai.client.token.usage")
    token_types = {
        attribute.value.string_value
        for point in tokens
        for attribute in point.attributes
        if attribute.key == "gen_ai.token.type"
    }
    assert token_types == {"input", "output"}
    assert sum(point.sum for point in tokens) == sum(
        int(attributes(chat)["gen_ai.usage.input_tokens"])
        + int(attributes(chat)["gen_ai.usage.output_tokens"])
        for chat in chats
    )
