"""A run screen with no agent behind it: the setup it shows, and a bridge whose first turn lasts
until the test ends it."""

from __future__ import annotations

import asyncio
import dataclasses

from fisk_ai.agent.outcome import RunResult
from fisk_ai.tui.bridge import RunBridge
from fisk_ai.tui.setup import RunSetup, ToolRow

SIZE = (100, 30)
SETUP = RunSetup(model="test-model", prompt="hello", bell=False, version="test")


class HeldBridge(RunBridge):
    """A bridge whose first turn lasts until the test resolves ``turn_end``."""

    def __init__(self) -> None:
        super().__init__()
        self.turn_end: asyncio.Future[RunResult] = asyncio.get_running_loop().create_future()

    async def start(self, prompt: str) -> RunResult:
        return await self.turn_end


MANY_TOOLS = dataclasses.replace(
    SETUP,
    tools=tuple(ToolRow(f"ops_tool_{number}", "ops", number % 3 == 0) for number in range(20)),
)
