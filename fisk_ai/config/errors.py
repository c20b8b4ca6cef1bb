"""The error every configuration problem is reported as."""

from __future__ import annotations

from fisk_ai.errors import FiskError

__all__ = ["ConfigError"]


class ConfigError(FiskError):
    """agent.yaml asks for something that cannot be honored.

    key is the dotted path of the offending setting (when there is one) and line the line of the
    file it was written on (when it came from a file); both are already part of the message.
    """

    def __init__(self, message: str, *, key: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.line = line
