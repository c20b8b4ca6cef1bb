"""Vendor-neutral types shared by tools and providers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolDef:
    """What a provider is told about one tool.

    ``input_schema`` is a JSON Schema object whose root type is ``object``. ``defer_loading`` asks a
    provider with tool search to send the definition behind the search tool.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    defer_loading: bool = False
