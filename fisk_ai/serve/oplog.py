"""The operator's log lines of a served run, one per step, in the user guide's wording.

Each line is its level, the message and ``key=value`` fields (logfmt: a value holding a space, a
quote or an equals sign is quoted), so an operator can grep a request, a caller or a session
across every line the worker wrote. Tokens never appear here: a session id is a hash of one.
They are the worker's audit trail, so `fisk serve` writes them at INFO whatever the verbosity
of the rest of its log (``log_operator_lines``).
"""

from __future__ import annotations

import enum
import logging
import sys
from typing import TextIO

from fisk_ai.a2a.messages import TerminalError, TerminalResult

__all__ = [
    "CHANNEL_PROMPTS",
    "OPERATOR_LOGGER",
    "OPERATOR_LOG_FORMAT",
    "ending_fields",
    "log_operator_lines",
    "operator_line",
    "operator_log",
]

OPERATOR_LOGGER = "fisk_ai.serve.operator"
CHANNEL_PROMPTS = "a2a/prompts"
"""The prompts channel as the banner's Endpoints row and every operator line name it."""
OPERATOR_LOG_FORMAT = "level=%(levelname)s %(message)s"
"""The guide's operator line: ``level=INFO msg="Accepted a prompt" channel=... request=...``."""

_log = logging.getLogger(OPERATOR_LOGGER)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        value = value.value
    text = str(value)
    if not text or any(ch in text for ch in ' "=\\') or any(ord(ch) < 0x20 for ch in text):
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        escaped = "".join(ch if ord(ch) >= 0x20 else f"\\x{ord(ch):02x}" for ch in escaped)
        return f'"{escaped}"'
    return text


def operator_line(message: str, **fields: object) -> str:
    """``msg="Accepted a prompt" channel=a2a/prompts request=r1 ...``; fields whose value is
    None are left out."""
    parts = [f"msg={_value(message)}"]
    parts += [f"{key}={_value(value)}" for key, value in fields.items() if value is not None]
    return " ".join(parts)


class _OperatorLines(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler ``log_operator_lines`` installs."""


def log_operator_lines(stream: TextIO | None = None) -> None:
    """Write the operator lines to ``stream`` (stderr by default) at INFO, in the guide's
    format, whatever level the rest of the process logs at; once, however often called."""
    if any(isinstance(handler, _OperatorLines) for handler in _log.handlers):
        return
    handler = _OperatorLines(stream if stream is not None else sys.stderr)
    handler.setFormatter(logging.Formatter(OPERATOR_LOG_FORMAT))
    _log.addHandler(handler)
    _log.setLevel(logging.INFO)
    # Written once, here: the root handler's format would print them a second time, unlike.
    _log.propagate = False


def operator_log(message: str, **fields: object) -> None:
    """Write one operator line at info level."""
    if _log.isEnabledFor(logging.INFO):
        _log.info("%s", operator_line(message, **fields))


def ending_fields(terminal: TerminalResult | TerminalError) -> dict[str, object]:
    """How a run ended, as the "Ending a run" line names it: the stop reason, and for an
    error its code (when it has one) and its sentence."""
    if isinstance(terminal, TerminalError):
        return {
            "stop_reason": terminal.stop_reason or None,
            "code": terminal.code or None,
            "reason": terminal.error,
        }
    return {"stop_reason": terminal.stop_reason}
