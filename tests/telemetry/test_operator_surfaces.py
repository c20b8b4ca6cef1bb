"""What an operator sees of telemetry: --no-telemetry on run, serve and mcp (refused in client
mode), the note naming exporter variables while export is off, and the delivery count after a
run."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.telemetry import TelemetrySettings, exporter_note, off_switch
from tests.telemetry.cowsay_runs import CLEAN, cowsay_config, fisk, joke
from tests.telemetry.receiver import Receiver


def test_a_run_that_exports_says_how_many_spans_reached_the_collector(
    receiver: Receiver, tmp_path: Path
) -> None:
    config = cowsay_config(
        tmp_path, f"\ntelemetry:\n  enabled: true\n  endpoint: {receiver.endpoint}\n"
    )
    ran = joke(tmp_path, config)
    assert ran.returncode == 0, ran.stderr
    spans = receiver.spans()
    assert spans
    assert f"telemetry: {len(spans)} of {len(spans)} spans delivered" in ran.stderr.splitlines()


def test_no_telemetry_turns_the_files_export_off(receiver: Receiver, tmp_path: Path) -> None:
    config = cowsay_config(
        tmp_path, f"\ntelemetry:\n  enabled: true\n  endpoint: {receiver.endpoint}\n"
    )
    ran = joke(tmp_path, config, "--no-telemetry", OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint)
    assert ran.returncode == 0, ran.stderr
    assert receiver.spans() == []
    assert "spans delivered" not in ran.stderr
    assert (
        "note: OTEL_EXPORTER_OTLP_ENDPOINT is set, but telemetry is off (--no-telemetry), so "
        "nothing is exported; the exporter variables never turn it on"
    ) in ran.stderr.splitlines()


def test_exporter_variables_alone_get_a_note_naming_the_configuration(tmp_path: Path) -> None:
    config = cowsay_config(tmp_path)
    ran = joke(tmp_path, config, OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:1")
    assert ran.returncode == 0, ran.stderr
    (note,) = [line for line in ran.stderr.splitlines() if line.startswith("note:")]
    assert "OTEL_EXPORTER_OTLP_ENDPOINT is set" in note
    assert f"(telemetry.enabled in {config} is not true)" in note


def test_a_run_without_telemetry_or_variables_says_nothing_of_it(tmp_path: Path) -> None:
    ran = joke(tmp_path, cowsay_config(tmp_path))
    assert ran.returncode == 0, ran.stderr
    assert "note:" not in ran.stderr
    assert "spans delivered" not in ran.stderr


def test_no_telemetry_is_refused_in_client_mode_when_typed(tmp_path: Path) -> None:
    ran = fisk(
        tmp_path, "run", "--nats-context", "nowhere", "--identity", "ops", "--no-telemetry", "hi"
    )
    assert ran.returncode == 1
    assert ran.stderr.splitlines()[-1] == (
        "fisk: error: --no-telemetry describes work the remote agent does, so it is refused "
        "with --nats-context; drop --no-telemetry"
    )


@pytest.mark.parametrize("command", ["run", "serve", "mcp"])
def test_the_commands_that_host_an_agent_take_no_telemetry(command: str) -> None:
    from fisk_ai.cli.main import build_parser

    args = build_parser().parse_args([command, "--no-telemetry"])
    assert args.no_telemetry is True


def test_the_switch_responsible_follows_the_precedence_chain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in (*CLEAN, "FISK_TELEMETRY_DISABLED", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    on = TelemetrySettings(enabled=True)
    assert off_switch(on) == ""
    assert exporter_note(on) == ""
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert off_switch(on) == "OTEL_SDK_DISABLED=true"
    assert off_switch(TelemetrySettings(enabled=True, disabled_by="--no-telemetry")) == (
        "--no-telemetry"
    )
    monkeypatch.setenv("FISK_TELEMETRY_DISABLED", "1")
    assert off_switch(TelemetrySettings(disabled_by="--no-telemetry")) == (
        "FISK_TELEMETRY_DISABLED=1"
    )
    # Off with no variable set: nothing to say.
    assert exporter_note(on) == ""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:4318/v1/traces")
    assert exporter_note(on).startswith(
        "note: OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT are set, but "
        "telemetry is off (FISK_TELEMETRY_DISABLED=1)"
    )


def test_info_shows_each_telemetry_value_with_its_origin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fisk_ai.config import Mode, load
    from fisk_ai.lineui.info import telemetry_section

    for name in ("FISK_TELEMETRY_DISABLED", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "agent.yaml"
    config.write_text(
        "identity: ops\ntelemetry:\n  enabled: true\n  sample_ratio: 0\n"
        "  capture:\n    enabled: true\n    max_bytes: 4096\n"
    )
    fields = {
        field.label: field.value for field in telemetry_section(load(config, Mode.LENIENT)).fields
    }
    assert fields == {
        "Enabled": "true (file)",
        "Endpoint": "http://localhost:4318 (default)",
        "Service name": "ops (default: the identity)",
        "Sample ratio": "0 (file)",
        "Metrics": "on (default)",
        "Capture": "on (file)",
        "Capture messages": "delta (default)",
        "Capture max bytes": "4096 (file)",
    }
    monkeypatch.setenv("FISK_TELEMETRY_DISABLED", "1")
    fields = {
        field.label: field.value for field in telemetry_section(load(config, Mode.LENIENT)).fields
    }
    assert fields["Enabled"] == "false (env FISK_TELEMETRY_DISABLED=1)"
    assert fields["Capture"] == "off (file, off while export is off)"
    assert "Capture messages" not in fields
