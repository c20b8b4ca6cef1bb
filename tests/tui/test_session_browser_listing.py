"""The session browser's list: a row per session, a corrupt one saying why, the filter, the count,
and no coroutine left behind."""

from __future__ import annotations

import gc
import warnings
from pathlib import Path

from textual.widgets import Static

from fisk_ai.screens.sessions import SessionBrowser
from fisk_ai.sessions import FileSessionStore
from fisk_ai.workstation.sessions_app import SessionsApp
from tests.screens.journals import stream_report, write_journal
from tests.tui.workstation import SIZE


async def test_the_browser_names_each_session_and_says_why_a_corrupt_one_cannot_be_read(
    tmp_path: Path,
) -> None:
    long_prompt = "report on the ORDERS stream " + "and every consumer on it " * 10
    write_journal(tmp_path, stream_report("orders-report", long_prompt))
    write_journal(tmp_path, stream_report("billing-check", "check the BILLING consumers"))
    broken = tmp_path / "billing-check.json"
    first, _, *rest = broken.read_bytes().splitlines()
    broken.write_bytes(b"\n".join([first, b"garbage", *rest]) + b"\n")
    app = SessionsApp(FileSessionStore(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionBrowser)
        listing = screen.session_list
        heading = str(screen.query_one("#browser-heading", Static).render())
        rows = {
            row.summary.run_id: listing.render_line(index).text.rstrip()
            for index, row in enumerate(listing.rows)
        }
        abouts = {row.summary.run_id: row.about for row in listing.rows}
        width = listing.size.width
        first_width = len(listing.render_line(0).text)
    assert heading.startswith("PROMPT")
    assert rows["billing-check"].startswith("cannot be read: ")
    assert " corrupt " in rows["billing-check"]
    assert rows["billing-check"].endswith("billing-check")
    assert "line 2 is corrupt" in abouts["billing-check"]
    assert rows["orders-report"].startswith("report on the ORDERS stream")
    assert "\u2026  " in rows["orders-report"]
    assert rows["orders-report"].endswith("orders-report")
    assert first_width == width


async def test_moving_through_the_browser_leaves_no_coroutine_unawaited(tmp_path: Path) -> None:
    for number in range(6):
        write_journal(tmp_path, stream_report(f"session-{number}", f"prompt {number}"))
    app = SessionsApp(FileSessionStore(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with app.run_test(size=SIZE) as pilot:
            await app.workers.wait_for_complete()
            await pilot.press(*"jjjjjkkk", "q")
        del app
        gc.collect()
    assert not [str(w.message) for w in caught if "never awaited" in str(w.message)]


async def test_the_filter_still_matches_the_model_the_list_no_longer_shows(
    tmp_path: Path,
) -> None:
    write_journal(tmp_path, stream_report("orders-report", "report on the ORDERS stream"))
    app = SessionsApp(FileSessionStore(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, SessionBrowser)
        model = screen.session_list.rows[0].summary.model
        await pilot.press("slash", *model[:8])
        await pilot.pause()
        listed = [row.summary.run_id for row in screen.session_list.rows]
    assert model
    assert listed == ["orders-report"]


async def test_one_stored_session_is_counted_as_one_session(tmp_path: Path) -> None:
    write_journal(tmp_path, stream_report("orders-report", "report on the ORDERS stream"))
    app = SessionsApp(FileSessionStore(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        bar = str(app.screen.query_one("#browser-status", Static).render())
    assert bar.startswith("1 of 1 session ")
