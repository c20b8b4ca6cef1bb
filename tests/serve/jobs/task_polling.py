"""Reading a task back until it reaches a state."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from nats.aio.client import Client as NatsClient

from fisk_ai.serve.jobs.wire import load_task


async def wait_for_state(client: NatsClient, task_id: str, *states: str) -> dict[str, Any]:
    for _ in range(200):
        task = await load_task(client.jetstream(), task_id)
        assert task is not None
        if task.state in states:
            return task.document
        await asyncio.sleep(0.05)
    pytest.fail(f"task {task_id} never reached {states}")
