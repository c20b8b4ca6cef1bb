"""The session browser fitted to the terminal: the first prompt leads, times are relative, status
words fit their column, the session id is on screen, and a removal keeps the highlight's place."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Static

from fisk_ai.cli.main import main
from fisk_ai.screens.sessions import SessionBrowser
from fisk_ai.screens.transcript import TranscriptScreen
from fisk_ai.sessions import FileSessionStore, fold
from fisk_ai.workstation.sessions_app import SessionsApp
from tests.screens.answerable import until_answerable
from tests.screens.endings import (
    ENDINGS,
    NOW,
    now,
    utc,
    write_every_ending,
    write_touched,
)
from tests.screens.journals import small_journal

__all__ = ["utc"]  # a fixture, used by name

NARROW = (80, 24)
WIDE = (160, 45)
KSUID = "2fTcEXAMPLEksuid0000000001x"
"""27 characters, as long as the ids a run makes."""


def browser_app(directory: Path) -> SessionsApp:
    return SessionsApp(FileSessionStore(directory), now=now)


def browser(app: App[str]) -> SessionBrowser:
    screen = app.screen
    assert isinstance(screen, SessionBrowser)
    return screen


def screen_lines(app: App[str]) -> list[str]:
    """The whole screen as its rows of text, as the terminal shows them."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def list_rows(app: App[str]) -> dict[str, str]:
    """Each listed session's row as drawn, by run id."""
    listing = browser(app).session_list
    return {
        row.summary.run_id: listing.render_line(index).text
        for index, row in enumerate(listing.rows)
    }


def heading(app: App[str]) -> str:
    return str(browser(app).query_one("#browser-heading", Static).render())


def highlighted(app: App[str]) -> str | None:
    summary = browser(app).session_list.highlighted
    return summary.run_id if summary else None


async def loaded(app: App[str]) -> None:
    await app.workers.wait_for_complete()


async def test_at_80_columns_each_row_leads_with_its_first_prompt(tmp_path: Path) -> None:
    write_touched(tmp_path, small_journal(KSUID, "check the BILLING consumers"), NOW)
    app = browser_app(tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await loaded(app)
        await pilot.pause()
        rows = list_rows(app)
        shown = heading(app)
    assert rows[KSUID].startswith("check the BILLING consumers")
    assert shown.startswith("PROMPT")


@pytest.mark.usefixtures("utc")
@pytest.mark.parametrize(
    ("ago", "said"),
    [
        (timedelta(seconds=20), "just now"),
        (timedelta(minutes=3), "3m ago"),
        (timedelta(hours=2, minutes=59), "2h ago"),
        (timedelta(hours=27), "yesterday"),
        (timedelta(days=3), "Nov 28"),
        (timedelta(days=400), "Oct 2024"),
    ],
)
async def test_at_80_columns_the_last_touch_is_a_relative_time(
    tmp_path: Path, ago: timedelta, said: str
) -> None:
    write_touched(tmp_path, small_journal("billing-check", "check BILLING"), NOW - ago)
    app = browser_app(tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await loaded(app)
        await pilot.pause()
        row = list_rows(app)["billing-check"]
        column = heading(app).index("UPDATED")
    assert (row[column:] + " ").startswith(said + " ")


async def test_the_filter_still_matches_the_date_the_row_no_longer_prints(
    tmp_path: Path,
) -> None:
    write_touched(tmp_path, small_journal("billing-check", "check BILLING"), NOW)
    write_touched(tmp_path, small_journal("fleet-hello", "say hi"), NOW - timedelta(days=60))
    app = browser_app(tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await loaded(app)
        await pilot.press("slash", *(NOW - timedelta(days=60)).strftime("%Y-%m"))
        await pilot.pause()
        listed = [row.summary.run_id for row in browser(app).session_list.rows]
    assert listed == ["fleet-hello"]


@pytest.mark.parametrize("size", [NARROW, WIDE], ids=["80x24", "160x45"])
async def test_every_status_word_fits_its_column(tmp_path: Path, size: tuple[int, int]) -> None:
    words = write_every_ending(tmp_path)
    app = browser_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await loaded(app)
        await pilot.pause()
        rows = list_rows(app)
        status = heading(app).index("STATUS")
        updated = heading(app).index("UPDATED")
    for run_id, word in words.items():
        assert rows[run_id][status:updated].rstrip() == word


async def test_at_160_columns_the_id_has_its_own_column(tmp_path: Path) -> None:
    write_touched(tmp_path, small_journal(KSUID, "check the BILLING consumers"), NOW)
    app = browser_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await loaded(app)
        await pilot.pause()
        row = list_rows(app)[KSUID]
        column = heading(app).index("ID")
    assert row.startswith("check the BILLING consumers")
    assert row[column:].startswith(KSUID)


async def test_at_80_columns_the_highlighted_session_id_is_on_screen(tmp_path: Path) -> None:
    write_touched(tmp_path, small_journal(KSUID, "check the BILLING consumers"), NOW)
    app = browser_app(tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await loaded(app)
        await pilot.pause()
        lines = screen_lines(app)
    assert any(f"session {KSUID}" in line for line in lines)


async def test_at_80_columns_the_viewer_header_names_the_session(tmp_path: Path) -> None:
    records = small_journal(KSUID, "check the BILLING consumers")
    app = SessionsApp(conversation=fold(records))
    async with app.run_test(size=NARROW) as pilot:
        await pilot.pause()
        top = screen_lines(app)[0]
    assert f"session {KSUID}" in top


async def session_ls_states(directory: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """``fisk session ls``: each row's STATE column, by id. The command runs its own event
    loop, so it runs on a thread."""
    assert await asyncio.to_thread(main, ["session", "--state-dir", str(directory), "ls"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    state = header.index("STATE")
    prompt = header.index("PROMPT")
    return {row.split()[0]: row[state:prompt].strip() for row in rows}


@pytest.mark.parametrize("ending", list(ENDINGS))
async def test_one_word_for_a_session_in_the_browser_the_viewer_and_session_ls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ending: str
) -> None:
    journal_of, word = ENDINGS[ending]
    records = journal_of()
    run_id = write_touched(tmp_path, records, NOW)
    app = browser_app(tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await loaded(app)
        await pilot.pause()
        row = list_rows(app)[run_id]
        status = heading(app).index("STATUS")
        in_browser = row[status:].split()[0]
        await pilot.press("enter")
        await loaded(app)
        await pilot.pause()
        viewer = app.screen
        assert isinstance(viewer, TranscriptScreen)
        header = str(viewer.query_one("#viewer-header", Static).render())
    in_viewer = header.split()[2]
    assert (in_browser, in_viewer, (await session_ls_states(tmp_path, capsys))[run_id]) == (
        word,
        word,
        word,
    )


def four_sessions(directory: Path) -> list[str]:
    """Four sessions, listed newest first in the order returned."""
    names = ["first-one", "second-one", "third-one", "fourth-one"]
    for minutes, name in enumerate(names):
        write_touched(
            directory, small_journal(name, f"prompt of {name}"), NOW - timedelta(minutes=minutes)
        )
    return names


async def remove_highlighted(app: App[str], pilot: Pilot[str]) -> None:
    """``d``, then Yes in the confirmation (No is focused first)."""
    await pilot.press("d")
    await until_answerable(app)
    await pilot.press("right", "enter")
    await loaded(app)
    await pilot.pause()


async def test_after_a_removal_the_next_row_takes_the_highlight(tmp_path: Path) -> None:
    names = four_sessions(tmp_path)
    app = browser_app(tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await loaded(app)
        await pilot.press("j")
        assert highlighted(app) == "second-one"
        await remove_highlighted(app, pilot)
        listed = [row.summary.run_id for row in browser(app).session_list.rows]
        now_highlighted = highlighted(app)
    assert listed == [names[0], names[2], names[3]]
    assert now_highlighted == "third-one"


async def test_after_removing_the_last_row_the_one_above_takes_the_highlight(
    tmp_path: Path,
) -> None:
    four_sessions(tmp_path)
    app = browser_app(tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await loaded(app)
        await pilot.press("G")
        await remove_highlighted(app, pilot)
        now_highlighted = highlighted(app)
    assert now_highlighted == "third-one"


async def test_after_a_removal_the_preview_shows_the_session_now_highlighted(
    tmp_path: Path,
) -> None:
    four_sessions(tmp_path)
    app = browser_app(tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await loaded(app)
        await pilot.press("j")
        await remove_highlighted(app, pilot)
        shown = browser(app).preview.transcript.text()
        named = str(browser(app).query_one("#browser-session", Static).render())
    assert "prompt of third-one" in shown
    assert named == "session third-one"


async def test_at_80_columns_the_bottom_bar_still_says_how_to_quit(tmp_path: Path) -> None:
    write_touched(tmp_path, small_journal("billing-check", "check BILLING"), NOW)
    app = browser_app(tmp_path)
    async with app.run_test(size=NARROW) as pilot:
        await loaded(app)
        await pilot.pause()
        bottom = screen_lines(app)[-1]
    assert bottom.rstrip().endswith("q quit")
