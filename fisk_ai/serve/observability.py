"""Telemetry as the commands that host an agent start it: `fisk run`, `fisk serve`, `fisk mcp`.

``--no-telemetry`` is the switch those commands own; the facade only ever sees its label. With
export off while OTLP exporter variables are set, the command says so once, naming the variables
and the switch responsible, since an operator who set them expects an export.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fisk_ai.telemetry import TelemetrySettings, exporter_note

if TYPE_CHECKING:
    from fisk_ai.config import Config
    from fisk_ai.telemetry import Telemetry

__all__ = ["NO_TELEMETRY_FLAG", "start_hosted_telemetry"]

NO_TELEMETRY_FLAG = "--no-telemetry"


def start_hosted_telemetry(
    cfg: Config, *, no_telemetry: bool, note: Callable[[str], None]
) -> Telemetry:
    """The telemetry handle of ``cfg`` (off with ``no_telemetry``); a bad endpoint fails here.
    When export is off and exporter variables are set, ``note`` gets the sentence saying why.
    The handle's startup span is open, from the moment the process started: the host calls
    ``telemetry.ready()`` once it can take a prompt."""
    from fisk_ai.agent.resources import start_telemetry

    disabled_by = NO_TELEMETRY_FLAG if no_telemetry else ""
    telemetry = start_telemetry(cfg, disabled_by=disabled_by)
    telemetry.startup(cfg.identity)
    if not telemetry.enabled:
        text = exporter_note(
            TelemetrySettings(enabled=cfg.telemetry.enabled, disabled_by=disabled_by),
            enabled_key=f"telemetry.enabled in {cfg.source}",
        )
        if text:
            note(text)
    return telemetry
