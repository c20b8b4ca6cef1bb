"""Waiting on a job's state by the task_state events the worker publishes, not by polling."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg

from fisk_ai.serve.jobs.wire import load_task
from tests.patience import DEADLINE

PATIENCE = DEADLINE
"""Seconds a test waits for a state before it fails rather than hangs; a loaded machine takes
well under one second per job."""


class TaskStates:
    """Every task_state event seen since the watch began, by task."""

    def __init__(self) -> None:
        self._seen: dict[str, list[str]] = {}
        self._changed = asyncio.Condition()

    async def note(self, message: Msg) -> None:
        event = json.loads(message.data)
        async with self._changed:
            self._seen.setdefault(event["task_id"], []).append(event["state"])
            self._changed.notify_all()

    def of(self, task_id: str) -> list[str]:
        return list(self._seen.get(task_id, []))

    async def reached(self, client: NatsClient, task_id: str, *states: str) -> dict[str, object]:
        """The task's record once an event said it reached one of ``states``."""
        async with asyncio.timeout(PATIENCE), self._changed:
            await self._changed.wait_for(
                lambda: any(state in states for state in self._seen.get(task_id, []))
            )
        task = await load_task(client.jetstream(), task_id)
        assert task is not None
        return task.document


@contextlib.asynccontextmanager
async def watching(client: NatsClient) -> AsyncIterator[TaskStates]:
    states = TaskStates()
    subscription = await client.subscribe("CHORIA_AJ.E.task_state.>", cb=states.note)
    await client.flush()
    try:
        yield states
    finally:
        await subscription.unsubscribe()
