import json
import sys

import pytest

from fisk_ai.telemetry import (
    DISABLED,
    ErrorClass,
    TelemetryError,
    TelemetrySettings,
    start,
)
from tests.telemetry.receiver import Receiver, attributes

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
PARENT_NOT_SAMPLED = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"


def settings(receiver: Receiver, **changes: object) -> TelemetrySettings:
    values: dict[str, object] = {"enabled": True, "endpoint": receiver.endpoint}
    values.update(changes)
    return TelemetrySettings(**values)  # type: ignore[arg-type]


def test_disabled_is_a_handle_whose_calls_do_nothing() -> None:
    handle = start(TelemetrySettings(enabled=False, endpoint="not a url"))
    assert handle is DISABLED
    handle.startup("ops")
    handle.ready(tools_by_kind={"application": 1})
    with handle.run("ops") as run, handle.model_call("anthropic", "m") as call:
        run.set("fisk.x", 1)
        run.terminal_reason("completed")
        call.usage(3, 4)
        call.finish_reasons("end_turn")
        call.content("gen_ai.input.messages", lambda: pytest.fail("built with capture off"))
        call.fail(ErrorClass("timeout"))
    assert handle.traceparent() == ""
    assert handle.shutdown().summary() == "0 of 0 spans delivered"


def test_the_no_telemetry_switch_wins_over_the_file(receiver: Receiver) -> None:
    assert start(settings(receiver, disabled_by="--no-telemetry")) is DISABLED


def test_importing_the_facade_loads_no_opentelemetry() -> None:
    import subprocess

    code = (
        "import fisk_ai.telemetry, sys; "
        "print(any(m.startswith('opentelemetry') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_spans_for_a_run_a_model_call_and_a_tool_call_reach_the_collector(
    receiver: Receiver,
) -> None:
    handle = start(settings(receiver, service_name="ops-agent"))
    with handle.run("ops"):
        with handle.model_call("anthropic", "claude-x") as call:
            call.usage(120, 30)
            call.finish_reasons("tool_use")
        with handle.tool_call("status") as tool:
            tool.fail(ErrorClass("tool_error"))
    delivery = handle.shutdown()

    assert delivery.summary() == "3 of 3 spans delivered"
    spans = {span.name: span for span in receiver.spans()}
    assert set(spans) == {"invoke_agent ops", "chat claude-x", "execute_tool status"}
    chat = attributes(spans["chat claude-x"])
    assert chat["gen_ai.provider.name"] == "anthropic"
    assert chat["gen_ai.request.model"] == "claude-x"
    assert chat["gen_ai.usage.input_tokens"] == 120
    assert chat["gen_ai.usage.output_tokens"] == 30
    assert chat["gen_ai.response.finish_reasons"] == ("tool_use",)
    root = spans["invoke_agent ops"]
    assert spans["chat claude-x"].parent_span_id == root.span_id
    assert spans["execute_tool status"].trace_id == root.trace_id
    assert attributes(spans["execute_tool status"])["error.type"] == "tool_error"
    assert receiver.service_names() == {"ops-agent"}
    assert {"gen_ai.client.token.usage", "gen_ai.client.operation.duration"} <= (
        receiver.metric_names()
    )
    assert "fisk.tool.calls" in receiver.metric_names()


def test_no_metrics_sends_spans_only(receiver: Receiver) -> None:
    handle = start(settings(receiver, no_metrics=True))
    with handle.run("ops"), handle.model_call("anthropic", "m") as call:
        call.usage(1, 1)
    handle.shutdown()
    assert len(receiver.spans()) == 2
    assert receiver.metrics == []


def test_an_exception_is_classed_without_a_stack(receiver: Receiver) -> None:
    handle = start(settings(receiver, no_metrics=True))
    with pytest.raises(RuntimeError), handle.run("ops"):
        raise RuntimeError("secret detail")
    handle.shutdown()
    (span,) = receiver.spans()
    assert attributes(span)["error.type"] == "_OTHER"
    assert list(span.events) == []
    assert "secret detail" not in span.status.message


def test_an_explicit_zero_ratio_samples_nothing(receiver: Receiver) -> None:
    handle = start(settings(receiver, sample_ratio=0.0, no_metrics=True))
    with handle.run("ops"):
        pass
    assert handle.shutdown().attempted == 0
    assert receiver.spans() == []


def test_a_sampled_remote_parent_is_followed_even_at_ratio_zero(receiver: Receiver) -> None:
    handle = start(settings(receiver, sample_ratio=0.0, no_metrics=True))
    with handle.run("ops", traceparent=PARENT):
        sent = handle.traceparent()
    handle.shutdown()
    (span,) = receiver.spans()
    assert span.trace_id.hex() == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert span.parent_span_id.hex() == "00f067aa0ba902b7"
    assert sent.startswith("00-4bf92f3577b34da6a3ce929d0e0e4736-")
    assert sent.endswith("-01")


def test_a_remote_parent_saying_not_sampled_does_not_switch_recording_off(
    receiver: Receiver,
) -> None:
    handle = start(settings(receiver, no_metrics=True))
    with handle.run("ops", traceparent=PARENT_NOT_SAMPLED):
        pass
    handle.shutdown()
    (span,) = receiver.spans()
    assert span.trace_id.hex() == "4bf92f3577b34da6a3ce929d0e0e4736"


def test_content_is_built_only_with_capture_on(receiver: Receiver) -> None:
    handle = start(settings(receiver, capture=True, no_metrics=True))
    assert handle.content_exported
    with handle.tool_call("status") as tool:
        tool.content("gen_ai.tool.call.arguments", lambda: '{"stream": "ORDERS"}')
    handle.shutdown()
    (span,) = receiver.spans()
    assert attributes(span)["gen_ai.tool.call.arguments"] == '{"stream": "ORDERS"}'


def test_a_value_over_max_bytes_stays_valid_json_within_the_cap(receiver: Receiver) -> None:
    handle = start(settings(receiver, capture=True, capture_max_bytes=120, no_metrics=True))
    with handle.tool_call("status") as tool:
        tool.content("gen_ai.tool.call.result", lambda: '{"streams": "' + "ORDERS " * 50 + '"}')
    handle.shutdown()
    (span,) = receiver.spans()
    captured = str(attributes(span)["gen_ai.tool.call.result"])
    assert len(captured.encode()) <= 120
    assert json.loads(captured).startswith('{"streams": "ORDERS')
    assert "raise telemetry.capture.max_bytes" in captured
    assert attributes(span)["fisk.content.truncated"] == ("gen_ai.tool.call.result",)


def test_capture_over_plain_http_to_a_remote_host_is_refused() -> None:
    with pytest.raises(TelemetryError, match=r"telemetry\.capture\.enabled"):
        start(TelemetrySettings(enabled=True, endpoint="http://collector.example", capture=True))


def test_a_bad_endpoint_is_refused_only_when_export_is_on() -> None:
    with pytest.raises(TelemetryError, match=r"telemetry\.endpoint"):
        start(TelemetrySettings(enabled=True, endpoint="collector:4318"))
    assert start(TelemetrySettings(enabled=False, endpoint="collector:4318")) is DISABLED


def test_delivery_counts_with_nothing_listening() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    handle = start(
        TelemetrySettings(enabled=True, endpoint=f"http://127.0.0.1:{port}", no_metrics=True)
    )
    with handle.run("ops"):
        pass
    delivery = handle.shutdown()
    assert (delivery.attempted, delivery.delivered) == (1, 0)
    assert delivery.first_error


def test_the_environment_carrier_is_read_only_when_well_formed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fisk_ai.telemetry import environment_traceparent

    monkeypatch.setenv("TRACEPARENT", PARENT)
    assert environment_traceparent() == PARENT
    for malformed in ("", "not-a-traceparent", "00-" + "0" * 32 + "-00f067aa0ba902b7-01"):
        monkeypatch.setenv("TRACEPARENT", malformed)
        assert environment_traceparent() == ""
