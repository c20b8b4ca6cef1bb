"""CORE. Tools from a fisk application: introspection, argv rendering, command execution."""
