"""LEAF. The one OpenTelemetry facade; takes primitives, never domain types.

Importing this package loads no OpenTelemetry module; ``start`` loads the SDK when export is on.
"""

from fisk_ai.telemetry.facade import (
    DISABLED,
    Delivery,
    ErrorClass,
    Span,
    Telemetry,
    TelemetryError,
    TelemetrySettings,
    exporter_variables_set,
    start,
)

__all__ = [
    "DISABLED",
    "Delivery",
    "ErrorClass",
    "Span",
    "Telemetry",
    "TelemetryError",
    "TelemetrySettings",
    "exporter_variables_set",
    "start",
]
