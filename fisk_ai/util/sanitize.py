"""Terminal text hygiene: text from a model, a tool or an application is data, never control."""

from __future__ import annotations

import re

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), and any other two-byte escape.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_ALL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_WHITESPACE_RUN = re.compile(r"\s+")


def strip_control(text: str) -> str:
    """Remove escape sequences and turn other control characters into spaces, keeping newlines
    and tabs, so multi-line output keeps its shape but cannot drive the terminal."""
    return _CONTROL.sub(" ", _ESCAPE_SEQUENCE.sub("", text))


def single_line(text: str, limit: int | None = None) -> str:
    """Sanitise text for one line of a display: escapes removed, every control character and
    whitespace run collapsed to one space, capped at ``limit`` characters with an ellipsis."""
    flat = _WHITESPACE_RUN.sub(" ", _CONTROL_ALL.sub(" ", _ESCAPE_SEQUENCE.sub("", text))).strip()
    if limit is not None and len(flat) > limit:
        return flat[:limit] + "..."
    return flat
