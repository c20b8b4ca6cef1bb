"""fisk-ai: command-line applications as agents operators can trust."""

__version__ = "0.1.0"
