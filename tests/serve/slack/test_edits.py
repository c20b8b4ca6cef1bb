"""The pacing of a status message's edits, kept in an injected clock: the first change goes out
at once, later ones at most once an interval and showing the latest, a rate-limit answer puts
the next edit off, and nothing of the progress goes out once the ending is on its way."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field

import pytest

from fisk_ai.serve.slack.edits import Pace, RateLimited, StatusEdits
from tests.patience import DEADLINE

INTERVAL = 1.0


@dataclass
class FakeTime:
    """A clock that moves only when the edits wait on it, or when the test moves it."""

    now: float = 0.0

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


@dataclass
class StatusMessage:
    """What the test's turn shows, and every edit Slack took of it, with the time it came."""

    time: FakeTime
    showing: str = ""
    edits: list[tuple[float, str]] = field(default_factory=list)
    refusals: list[float] = field(default_factory=list)
    """Retry-After answers still to give, one per edit, before Slack takes edits again."""
    arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def edit(self) -> None:
        async with self.arrived:
            self.arrived.notify_all()
        if self.refusals:
            raise RateLimited(self.refusals.pop(0))
        self.edits.append((self.time.now, self.showing))

    async def wait_for_edits(self, count: int) -> None:
        async with self.arrived:
            await asyncio.wait_for(
                self.arrived.wait_for(lambda: len(self.edits) >= count), DEADLINE
            )


def paced(message: StatusMessage, pace: Pace | None = None) -> StatusEdits:
    time = message.time
    return StatusEdits(
        message.edit, pace or Pace(), interval=INTERVAL, clock=time.clock, sleep=time.sleep
    )


@pytest.fixture
def message() -> StatusMessage:
    return StatusMessage(FakeTime())


async def test_the_first_change_is_edited_in_at_once(message: StatusMessage) -> None:
    edits = paced(message)
    message.time.now = 42.0
    message.showing = "Three str"
    edits.changed()
    await message.wait_for_edits(1)

    assert message.edits == [(42.0, "Three str")]


async def test_changes_within_an_interval_go_out_as_one_edit_showing_the_latest(
    message: StatusMessage,
) -> None:
    edits = paced(message)
    message.showing = "Three"
    edits.changed()
    await message.wait_for_edits(1)
    for piece in (" streams", " have", " no consumers."):
        message.showing += piece
        edits.changed()
    await message.wait_for_edits(2)
    await edits.stop()

    assert message.edits == [(0.0, "Three"), (INTERVAL, "Three streams have no consumers.")]


async def test_edits_are_never_closer_than_the_interval(message: StatusMessage) -> None:
    edits = paced(message)
    arrivals = [0.0, 0.1, 0.35, 0.9, 1.2, 1.25, 3.0, 3.05, 3.9, 4.0, 6.5, 6.6]
    for step, arrival in enumerate(arrivals):
        message.time.now = max(message.time.now, arrival)
        message.showing = f"piece {step}"
        edits.changed()
        for _ in range(3):
            await asyncio.sleep(0)
    await edits.last(message.edit)

    times = [at for at, _ in message.edits]
    assert len(times) >= 3
    assert all(later - earlier >= INTERVAL for earlier, later in itertools.pairwise(times))
    assert message.edits[-1][1] == f"piece {len(arrivals) - 1}"


async def test_a_rate_limit_answer_puts_the_next_edit_off_and_it_carries_the_latest(
    message: StatusMessage,
) -> None:
    edits = paced(message)
    message.refusals = [5.0]
    message.showing = "Three"
    edits.changed()
    async with message.arrived:
        await message.arrived.wait()
    message.showing = "Three streams"
    edits.changed()
    await message.wait_for_edits(1)

    assert message.edits == [(5.0, "Three streams")]


async def test_nothing_of_the_progress_goes_out_after_stop(message: StatusMessage) -> None:
    edits = paced(message)
    message.showing = "Three"
    edits.changed()
    await message.wait_for_edits(1)
    message.showing = "Three streams"
    edits.changed()
    await edits.stop()
    edits.changed()
    for _ in range(5):
        await asyncio.sleep(0)

    assert message.edits == [(0.0, "Three")]


async def test_the_ending_waits_for_the_pace_of_the_thread(message: StatusMessage) -> None:
    pace = Pace()
    first_turn = paced(message, pace)
    message.showing = "Thinking"
    first_turn.changed()
    await message.wait_for_edits(1)
    await first_turn.stop()
    next_turn = paced(message, pace)
    message.showing = "Answered."
    await next_turn.last(message.edit)

    assert message.edits == [(0.0, "Thinking"), (INTERVAL, "Answered.")]
