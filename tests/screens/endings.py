"""Stored sessions for each way a session can stand, with the one word every surface gives it,
and a fixed clock for the browser's relative times."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fisk_ai.sessions import Record, Terminal, TerminalReason
from tests.screens.journals import stream_report, write_journal
from tests.sessions.builders import journal, meta, result, turn

NOW = datetime(2025, 12, 1, 12, 0, tzinfo=UTC)
"""The browser's clock in these tests: a Monday noon, late in a year."""


def now() -> datetime:
    return NOW


def ended(run_id: str, prompt: str, *payloads: object) -> list[Record]:
    return journal(*payloads, first=meta(run_id, prompt))  # type: ignore[arg-type]


def completed() -> list[Record]:
    return stream_report("done-report", "report on the ORDERS stream")


def answered() -> list[Record]:
    """A chat left between turns: suspended after its answer."""
    records = stream_report("chat-resting", "how is the ORDERS stream doing")
    records[-1] = dataclasses.replace(records[-1], payload=Terminal(TerminalReason.SUSPENDED))
    return records


def suspended_at_a_question() -> list[Record]:
    """A turn that asked to run a gated command and was left at the approval."""
    return ended(
        "asked-approval",
        "purge the ORDERS stream",
        turn(1, "c1"),
        Terminal(TerminalReason.SUSPENDED, "waiting for the operator to approve tool_c1"),
    )


def max_iterations() -> list[Record]:
    return ended(
        "ran-too-long",
        "check every consumer of every stream",
        turn(1, "c1"),
        result("c1"),
        Terminal(TerminalReason.MAX_ITERATIONS, "reached max_iterations (1)"),
    )


def failed() -> list[Record]:
    return ended(
        "api-failed",
        "summarize the BILLING stream",
        Terminal(TerminalReason.ERROR, "API error 529: overloaded"),
    )


def over_budget() -> list[Record]:
    return ended(
        "spent-budget",
        "read every message of ORDERS",
        turn(1, "c1"),
        result("c1"),
        Terminal(TerminalReason.BUDGET, "token budget of 500000 spent"),
    )


def still_open() -> list[Record]:
    return ended("never-ended", "list the streams", turn(1, "c1"))


ENDINGS = {
    "completed": (completed, "completed"),
    "answered": (answered, "answered"),
    "suspended at a question": (suspended_at_a_question, "suspended"),
    "max_iterations": (max_iterations, "limit"),
    "failed": (failed, "failed"),
    "budget": (over_budget, "budget"),
    "open": (still_open, "open"),
}
"""Each kind of ending: the journal that ends so, and the word every surface shows for it."""


def run_id_of(records: list[Record]) -> str:
    return records[0].payload.run_id  # type: ignore[union-attr]


def write_touched(directory: Path, records: list[Record], touched: datetime) -> str:
    """Write the journal and set its last touch (the file store's ``updated``)."""
    write_journal(directory, records)
    run_id = run_id_of(records)
    stamp = touched.timestamp()
    os.utime(directory / f"{run_id}.json", (stamp, stamp))
    return run_id


def write_every_ending(directory: Path) -> dict[str, str]:
    """One session of each kind, each touched a minute apart; run id to its word."""
    words = {}
    for minutes, (journal_of, word) in enumerate(ENDINGS.values(), start=1):
        run_id = write_touched(directory, journal_of(), NOW - timedelta(minutes=minutes))
        words[run_id] = word
    return words


@pytest.fixture
def utc() -> Iterator[None]:
    """Local time is UTC, so calendar words (yesterday, Nov 28) do not depend on the host."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()
