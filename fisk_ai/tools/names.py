"""The names a tool may carry to a model or another agent, and the reasons a tool is left off a
listing that every surface gives in the same words."""

from __future__ import annotations

import re

__all__ = ["CANNOT_REPORT_GATING", "unusable_name"]

_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+", re.ASCII)

CANNOT_REPORT_GATING = "it cannot report whether it is confirmation-gated"
"""Why a serving surface leaves out a tool that does not answer ``Confirmable``: served ungated,
it would run unapproved if it ever needed approval."""


def unusable_name(name: str) -> str | None:
    """Why ``name`` cannot be a tool's name on the wire (the Messages API's, MCP's and a2a's
    rule), or None when it can."""
    if _TOOL_NAME.fullmatch(name) is None:
        return "its name is not letters, digits, - and _ only"
    return None
