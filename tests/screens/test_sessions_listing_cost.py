"""The browser formats a row when it is drawn or filtered, not when it is listed: thousands of
sessions cost a screenful of formatting to show."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.screens.sessions import SessionBrowser
from fisk_ai.sessions import FileSessionStore
from fisk_ai.workstation.sessions_app import SessionsApp
from tests.screens.journals import small_journal, write_journal

SIZE = (120, 30)
SESSIONS = 2000


def formatted(browser: SessionBrowser) -> int:
    return sum("cells" in vars(row) for row in browser.all_rows)


async def test_only_the_rows_on_screen_are_formatted_until_something_is_typed(
    tmp_path: Path,
) -> None:
    for number in range(SESSIONS):
        write_journal(tmp_path, small_journal(f"run-{number:04d}", f"prompt number {number}"))
    app = SessionsApp(FileSessionStore(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        browser = app.screen
        assert isinstance(browser, SessionBrowser)
        assert len(browser.all_rows) == SESSIONS
        assert 0 < formatted(browser) <= SIZE[1]
        drawn = browser.session_list.render_line(0).text
        assert drawn.startswith(browser.session_list.rows[0].summary.first_prompt)

        await pilot.press(*"number 1234")
        await pilot.pause()
        assert [row.summary.run_id for row in browser.session_list.rows] == ["run-1234"]
        assert formatted(browser) == SESSIONS
