"""`fisk info` prints where telemetry goes without the credentials an endpoint may carry."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.config import Mode, load
from fisk_ai.lineui.info import telemetry_section


def test_an_otlp_endpoints_userinfo_and_query_values_are_not_printed(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        "telemetry:\n  enabled: true\n"
        "  endpoint: https://fleet:hunter2-secret@collector.example:4318/otlp?api_key=abc123\n"
    )
    fields = {f.label: f.value for f in telemetry_section(load(config, Mode.LENIENT)).fields}
    assert fields["Endpoint"] == "https://collector.example:4318/otlp?api_key=REDACTED (file)"
