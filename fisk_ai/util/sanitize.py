"""Terminal text hygiene: text from a model, a tool or an application is data, never control."""

from __future__ import annotations

import re

# CSI (ESC [ ... final); OSC (ESC ] ... BEL or ST) and DCS, SOS, PM, APC (ESC P/X/^/_ ... ST),
# each removed whole only when terminated on the same line. An unterminated string sequence loses
# its two-byte introducer alone (the last alternative), so whatever follows stays visible: the
# operator sees the text the model sees.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)"
    r"|\x1b[PX^_][^\x1b\n]*\x1b\\"
    r"|\x1b[@-Z\\-_]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_ALL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Bidirectional embeddings, overrides and isolates reorder what follows them on screen, so text
# can read differently from what it is (U+202E shows "exe.txt" for "txt.exe"). Removed.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
# A lone surrogate (from a \ud800 escape) cannot be encoded for a terminal; shown as U+FFFD.
_SURROGATE = re.compile("[\ud800-\udfff]")
_WHITESPACE_RUN = re.compile(r"\s+")


def strip_control(text: str) -> str:
    """Remove escape sequences and bidi controls, turn other control characters into spaces
    and lone surrogates into U+FFFD, keeping newlines and tabs, so multi-line output keeps its
    shape but cannot drive the terminal."""
    return _CONTROL.sub(" ", _plain(text))


def single_line(text: str, limit: int | None = None) -> str:
    """Sanitise text for one line of a display: escapes removed, every control character and
    whitespace run collapsed to one space, capped at ``limit`` characters with an ellipsis."""
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        # Nothing to change: every escape, control, bidi mark, surrogate and whitespace but the
        # plain space is unprintable. Listings of thousands of rows are mostly such text.
        flat = text
    else:
        flat = _WHITESPACE_RUN.sub(" ", _CONTROL_ALL.sub(" ", _plain(text))).strip()
    if limit is not None and len(flat) > limit:
        return flat[:limit] + "..."
    return flat


def _plain(text: str) -> str:
    return _SURROGATE.sub("\ufffd", _BIDI.sub("", _ESCAPE_SEQUENCE.sub("", text)))
