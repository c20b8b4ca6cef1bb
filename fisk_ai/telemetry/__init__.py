"""LEAF. The one OpenTelemetry facade; takes primitives, never domain types."""
