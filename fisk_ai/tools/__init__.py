"""CORE. The Tool protocol, the immutable ToolSet, selection and argument validation."""
