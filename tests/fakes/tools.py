"""A tool the test holds: its call runs until the test lets it go, for serving tests that need a
call in flight (a capacity refusal, a drain, a cancel)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fisk_ai.llm.types import ToolDef
from fisk_ai.tools.base import ExecDeps, Kind, Outcome, Presentation


@dataclass(eq=False)
class HeldTool:
    """A served in-process tool whose call runs until the test releases it."""

    name: str = "held"
    started: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    description = "Waits for the test"
    model_description = "Waits for the test"
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    kind = Kind.CUSTOM
    presentation = Presentation.TRACED
    mcp_exposable = True
    a2a_exposable = True
    # A tool a serving surface takes must say whether it is gated; this one never is.
    tags: tuple[str, ...] = ()

    def confirm_trigger(self, confirm_tags: Sequence[str]) -> str | None:
        return None

    def definition(self, defer_loading: bool) -> ToolDef:
        return ToolDef(self.name, self.description, self.input_schema)

    async def execute(self, arguments: str, deps: ExecDeps) -> Outcome:
        self.started.set()
        await self.release.wait()
        return Outcome(f"released with {arguments}")
