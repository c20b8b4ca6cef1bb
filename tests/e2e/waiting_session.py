"""A stored session suspended at a question, waiting for its answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fisk_ai.sessions import Deferred, FileSessionStore, Terminal, TerminalReason
from tests.sessions.builders import meta, result, turn

SESSION = "waiting-1"


def write_waiting_session(directory: Path) -> None:
    """A session whose turn called tu_1 (answered) and tu_2 (deferred), then suspended."""

    async def write() -> None:
        journal = await FileSessionStore(directory).create(SESSION, meta(SESSION))
        await journal.append(turn(1, "tu_1", "tu_2", text="Asking for the change."))
        await journal.append(result("tu_1", "ORDERS: 3 consumers"))
        await journal.append(Deferred("tu_2", "approve_change", note="waiting for CAB"))
        await journal.append(Terminal(TerminalReason.SUSPENDED))
        await journal.close()

    asyncio.run(write())
