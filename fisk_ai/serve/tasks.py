"""The tasks a serving endpoint has started and not yet seen finish."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from fisk_ai.util.cancelling import cancel_and_wait


class RunningTasks:
    """Starts tasks, forgets each as it finishes, and can wait for or abandon the rest."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def start(self, work: Coroutine[Any, Any, None], *, name: str | None = None) -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_idle(self) -> None:
        """Return once every task has finished."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    async def cancel_all(self) -> None:
        """Cancel every task still running and wait for each to unwind."""
        await cancel_and_wait(*self._tasks)
