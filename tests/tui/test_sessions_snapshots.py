from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from fisk_ai.sessions import FileSessionStore
from fisk_ai.workstation.sessions_app import SessionsApp
from tests.screens.journals import conversation_of, small_journal, stream_report, write_journal

SIZE = (110, 24)
SnapCompare = Callable[..., bool]
# 2025-03-04 05:06 UTC: every journal was last touched then, so the listing does not move.
TOUCHED = 1741064760


class PlainStore(FileSessionStore):
    """Describes itself without its temporary directory, which changes on every run."""

    def describe(self) -> str:
        return "file store"


@pytest.fixture
def utc() -> Iterator[None]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.mark.usefixtures("utc")
def test_the_session_browser(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """Three sessions, the last one highlighted and previewed on the right."""
    write_journal(tmp_path, stream_report("orders-report", "report on the ORDERS stream"))
    write_journal(tmp_path, small_journal("billing-check", "check the BILLING consumers"))
    write_journal(tmp_path, small_journal("fleet-hello", "say hi to the fleet"))
    for path in tmp_path.iterdir():
        os.utime(path, (TOUCHED, TOUCHED))
    app = SessionsApp(PlainStore(tmp_path))

    async def until_previewed(pilot: Pilot[None]) -> None:
        await pilot.app.workers.wait_for_complete()
        await pilot.press("G")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=until_previewed)


def test_the_transcript_viewer(snap_compare: SnapCompare) -> None:
    """A stored conversation with its thinking and tool output folded."""
    app = SessionsApp(conversation=conversation_of(stream_report()))
    assert snap_compare(app, terminal_size=SIZE)
