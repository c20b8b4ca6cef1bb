"""LEAF. The one OpenTelemetry facade; takes primitives, never domain types.

Importing this package loads no OpenTelemetry module; ``start`` loads the SDK when export is on.
"""

from fisk_ai.telemetry.facade import (
    DEFAULT_ENDPOINT,
    DISABLED,
    TOOL_FAILED,
    Delivery,
    ErrorClass,
    ServedCall,
    ServedToolOutcome,
    Span,
    Telemetry,
    TelemetryError,
    TelemetrySettings,
    ToolRefusal,
    TurnTrace,
    current,
    current_traceparent,
    environment_traceparent,
    export_on,
    exporter_note,
    exporter_variables_set,
    off_switch,
    start,
    turn_trace,
)

__all__ = [
    "DEFAULT_ENDPOINT",
    "DISABLED",
    "TOOL_FAILED",
    "Delivery",
    "ErrorClass",
    "ServedCall",
    "ServedToolOutcome",
    "Span",
    "Telemetry",
    "TelemetryError",
    "TelemetrySettings",
    "ToolRefusal",
    "TurnTrace",
    "current",
    "current_traceparent",
    "environment_traceparent",
    "export_on",
    "exporter_note",
    "exporter_variables_set",
    "off_switch",
    "start",
    "turn_trace",
]
