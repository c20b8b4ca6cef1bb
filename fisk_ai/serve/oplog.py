"""The operator's log lines of a served run, one per step, in the user guide's wording.

Each line is the message followed by ``key=value`` fields (logfmt: a value holding a space, a
quote or an equals sign is quoted), so an operator can grep a request, a caller or a session
across every line the worker wrote. Tokens never appear here: a session id is a hash of one.
"""

from __future__ import annotations

import enum
import logging

from fisk_ai.a2a.messages import TerminalError, TerminalResult

__all__ = ["CHANNEL_PROMPTS", "OPERATOR_LOGGER", "ending_fields", "operator_line", "operator_log"]

OPERATOR_LOGGER = "fisk_ai.serve.operator"
CHANNEL_PROMPTS = "a2a/prompts"
"""The prompts channel as the banner's Endpoints row and every operator line name it."""

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


def operator_log(message: str, **fields: object) -> None:
    """Write one operator line at info level (seen with `fisk serve --verbose`)."""
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
