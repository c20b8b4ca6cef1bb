"""How a stored session stands, in one word, and when it was last touched, relative to now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fisk_ai.presentation import STATE_WIDTH, SessionState, relative_time, session_state
from fisk_ai.sessions import SessionStatus, SessionSummary
from tests.screens.endings import utc

__all__ = ["utc"]  # a fixture, used by name

NOW = datetime(2025, 12, 1, 12, 0, tzinfo=UTC)


def summary(status: SessionStatus, *, between_turns: bool = False) -> SessionSummary:
    return SessionSummary(
        "run-1", status, "claude-sonnet", NOW, "hello", between_turns=between_turns
    )


@pytest.mark.parametrize(
    ("status", "between_turns", "word"),
    [
        (SessionStatus.SUSPENDED, True, "answered"),
        (SessionStatus.SUSPENDED, False, "suspended"),
        (SessionStatus.COMPLETED, False, "completed"),
        (SessionStatus.ERROR, False, "failed"),
        (SessionStatus.BUDGET, False, "budget"),
        (SessionStatus.MAX_ITERATIONS, False, "limit"),
        (SessionStatus.OPEN, False, "open"),
        (SessionStatus.CORRUPT, False, "corrupt"),
    ],
)
def test_each_status_has_one_word(status: SessionStatus, between_turns: bool, word: str) -> None:
    assert session_state(summary(status, between_turns=between_turns)).value == word


def test_no_word_is_wider_than_a_status_column() -> None:
    assert all(len(state.value) <= STATE_WIDTH <= 9 for state in SessionState)


@pytest.mark.usefixtures("utc")
@pytest.mark.parametrize(
    ("moment", "said"),
    [
        (NOW + timedelta(minutes=5), "just now"),
        (NOW - timedelta(seconds=59), "just now"),
        (NOW - timedelta(minutes=1), "1m ago"),
        (NOW - timedelta(minutes=59, seconds=59), "59m ago"),
        (NOW - timedelta(hours=1), "1h ago"),
        (NOW - timedelta(hours=23, minutes=59), "23h ago"),
        (datetime(2025, 11, 30, 0, 0, tzinfo=UTC), "yesterday"),
        (datetime(2025, 11, 29, 23, 59, tzinfo=UTC), "Nov 29"),
        (datetime(2025, 1, 1, 0, 0, tzinfo=UTC), "Jan 1"),
        (datetime(2024, 12, 31, 23, 0, tzinfo=UTC), "Dec 2024"),
    ],
)
def test_the_last_touch_is_said_relative_to_now(moment: datetime, said: str) -> None:
    assert relative_time(moment, NOW) == said
