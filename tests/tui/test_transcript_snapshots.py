from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from fisk_ai.tui.transcript import Transcript
from tests.tui.sample import conversation, long_output
from tests.tui.viewer_app import ViewerApp

SIZE = (80, 24)
SnapCompare = Callable[..., bool]


def test_folded_tool_output(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """Short results show whole; a long one shows its first lines and a fold line naming
    Ctrl-O; thinking shows its placeholder."""
    app = ViewerApp([*conversation(), long_output(20)], tmp_path)
    assert snap_compare(app, terminal_size=SIZE)


def test_expanded_tool_output(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """Every output line shows under its `<-`, the error output in red."""
    app = ViewerApp(conversation(), tmp_path, Transcript(output_folded=False))
    assert snap_compare(app, terminal_size=SIZE)


def test_search_hit(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """Searching for "invoices" marks the word on every line holding it: the current match
    strongly, the one in the answer lightly; the current match's block is focused."""

    async def search(pilot: Pilot[None]) -> None:
        pilot.app.query_one("TranscriptView").search("invoices")  # type: ignore[attr-defined]
        await pilot.pause()

    assert snap_compare(ViewerApp(conversation(), tmp_path), terminal_size=SIZE, run_before=search)
