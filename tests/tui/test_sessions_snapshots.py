from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot

from fisk_ai.sessions import FileSessionStore
from fisk_ai.workstation.sessions_app import SessionsApp
from tests.screens.endings import ENDINGS, NOW, now, utc, write_touched
from tests.screens.journals import conversation_of, small_journal, stream_report

__all__ = ["utc"]  # a fixture, used by name

SIZE = (110, 24)
NARROW = (80, 24)
WIDE = (160, 45)
SnapCompare = Callable[..., bool]
LONG_PROMPT = (
    "deploy the new ingest pipeline to staging and watch every consumer for lag over the next hour"
)
# How long before the browser's fixed clock each session was last touched, newest first.
TOUCHED_AGO = (
    timedelta(seconds=5),
    timedelta(minutes=3),
    timedelta(minutes=40),
    timedelta(hours=2),
    timedelta(hours=27),
    timedelta(days=3),
    timedelta(days=40),
    timedelta(days=400),
)


class PlainStore(FileSessionStore):
    """Describes itself without its temporary directory, which changes on every run."""

    def describe(self) -> str:
        return "file store"


def every_ending(directory: Path) -> SessionsApp:
    """A session of each kind of ending and one with a long prompt and a run's own id, touched
    from seconds to a year before the browser's fixed clock."""
    journals = [journal_of() for journal_of, _ in ENDINGS.values()]
    journals.insert(2, small_journal("2fTcEXAMPLEksuid0000000001x", LONG_PROMPT))
    for records, ago in zip(journals, TOUCHED_AGO, strict=True):
        write_touched(directory, records, NOW - ago)
    return SessionsApp(PlainStore(directory), now=now)


async def until_previewed(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.press("j", "j")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.usefixtures("utc")
def test_the_session_browser_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """The prompt leads, then the status word and a relative time; the preview is below the
    list with the highlighted session's id above it; the third row is highlighted."""
    app = every_ending(tmp_path)
    assert snap_compare(app, terminal_size=NARROW, run_before=until_previewed)


@pytest.mark.usefixtures("utc")
def test_the_session_browser_at_160x45(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """Beside the preview, with the id column the width has room for."""
    app = every_ending(tmp_path)
    assert snap_compare(app, terminal_size=WIDE, run_before=until_previewed)


def test_the_transcript_viewer(snap_compare: SnapCompare) -> None:
    """A stored conversation with its thinking and tool output folded."""
    app = SessionsApp(conversation=conversation_of(stream_report()))
    assert snap_compare(app, terminal_size=SIZE)


def test_the_transcript_viewer_at_80x24(snap_compare: SnapCompare) -> None:
    """The header leads with the session id, then the status word the browser uses."""
    app = SessionsApp(conversation=conversation_of(stream_report("2fTcEXAMPLEksuid0000000001x")))
    assert snap_compare(app, terminal_size=NARROW)
