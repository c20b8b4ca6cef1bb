"""Cancelling a child task and waiting for it, with the caller still stoppable meanwhile."""

from __future__ import annotations

import asyncio

import pytest

from fisk_ai.util.cancelling import cancel_and_wait
from tests.patience import DEADLINE


async def test_a_cancel_of_the_caller_while_the_task_unwinds_reaches_the_caller() -> None:
    started, unwinding, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def slow_to_stop() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            unwinding.set()
            await release.wait()

    child = asyncio.create_task(slow_to_stop())
    async with asyncio.timeout(DEADLINE):
        await started.wait()
        caller = asyncio.create_task(cancel_and_wait(child))
        await unwinding.wait()
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        release.set()
        await asyncio.wait({child})
    assert child.cancelled()


async def test_an_error_the_task_raises_as_it_unwinds_reaches_the_caller() -> None:
    started = asyncio.Event()

    async def fails_to_stop() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            raise RuntimeError("the close failed")

    children = [asyncio.create_task(fails_to_stop()), asyncio.create_task(asyncio.Event().wait())]
    await started.wait()
    with pytest.raises(RuntimeError, match="the close failed"):
        await cancel_and_wait(*children)
    assert children[1].cancelled()
