from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from textual import events
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import Static

from fisk_ai.screens.question import ConfirmScreen
from fisk_ai.screens.sessions import SessionBrowser
from fisk_ai.screens.transcript import TranscriptScreen
from fisk_ai.sessions import FileSessionStore, SessionSummary
from fisk_ai.workstation.sessions_app import SessionsApp
from tests.screens.answerable import until_answerable
from tests.screens.journals import small_journal, stream_report, write_journal
from tests.screens.screen_host import ScreenHost

SIZE = (120, 30)


class GatedStore(FileSessionStore):
    """A file store whose listing waits until the test opens the gate."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.gate = asyncio.Event()

    async def list(self) -> list[SessionSummary]:
        await self.gate.wait()
        return await super().list()


def three_sessions(directory: Path) -> FileSessionStore:
    write_journal(directory, stream_report("orders-report", "report on the ORDERS stream"))
    write_journal(directory, small_journal("billing-check", "check the BILLING consumers"))
    write_journal(directory, small_journal("fleet-hello", "say hi to the fleet"))
    return FileSessionStore(directory)


def browser(app: SessionsApp) -> SessionBrowser:
    screen = app.screen
    assert isinstance(screen, SessionBrowser)
    return screen


def notices(posted: list[Message]) -> list[str]:
    return [message.notification.message for message in posted if isinstance(message, Notify)]


def listed(app: SessionsApp) -> list[str]:
    return [row.summary.run_id for row in browser(app).session_list.rows]


async def until_loaded(app: SessionsApp) -> None:
    await app.workers.wait_for_complete()


async def test_the_browser_lists_every_session(tmp_path: Path) -> None:
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.pause()
        assert sorted(listed(app)) == ["billing-check", "fleet-hello", "orders-report"]


async def test_a_conversation_resting_between_turns_reads_answered(tmp_path: Path) -> None:
    from fisk_ai.sessions import Terminal, TerminalReason
    from tests.sessions.builders import journal

    answered = stream_report("served-chat", "how is ORDERS")
    answered[-1] = dataclasses.replace(answered[-1], payload=Terminal(TerminalReason.SUSPENDED))
    reported = stream_report("stopped-mid-turn", "report on BILLING")
    # Suspended with the tool's output journaled and the model not yet asked again.
    stopped = journal(
        reported[1].payload,
        reported[2].payload,
        Terminal(TerminalReason.SUSPENDED),
        first=reported[0].payload,  # type: ignore[arg-type]
    )
    write_journal(tmp_path, answered)
    write_journal(tmp_path, stopped)
    app = SessionsApp(FileSessionStore(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.pause()
        listing = browser(app).session_list
        shown = {
            row.summary.run_id: listing.render_line(index).text
            for index, row in enumerate(listing.rows)
        }
    assert " answered " in shown["served-chat"]
    assert " suspended " in shown["stopped-mid-turn"]


async def test_typing_filters_the_listing(tmp_path: Path) -> None:
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.press(*"billing")
        assert browser(app).filter_field.value == "billing"
        assert listed(app) == ["billing-check"]
        await pilot.press("escape")
        assert len(listed(app)) == 3


async def test_the_preview_shows_the_highlighted_transcript(tmp_path: Path) -> None:
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.press(*"orders", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "ORDERS holds 1260 messages." in browser(app).preview.transcript.text()


async def test_enter_opens_the_viewer_and_q_comes_back(tmp_path: Path) -> None:
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.press(*"orders", "enter", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert screen.conversation.run_id == "orders-report"
        await pilot.press("q")
        assert isinstance(app.screen, SessionBrowser)


async def test_d_removes_a_session_after_confirming(tmp_path: Path) -> None:
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.press(*"fleet", "enter", "d")
        assert isinstance(app.screen, ConfirmScreen)
        await until_answerable(app)
        await pilot.press("right", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not (tmp_path / "fleet-hello.json").exists()
        assert "fleet-hello" not in [row.summary.run_id for row in browser(app).all_rows]


async def test_declining_the_removal_keeps_the_session(tmp_path: Path) -> None:
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.press(*"fleet", "enter", "d")
        await until_answerable(app)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert (tmp_path / "fleet-hello.json").exists()
        assert listed(app) == ["fleet-hello"]


async def test_five_thousand_journals_load_while_keys_are_answered(tmp_path: Path) -> None:
    for number in range(5000):
        write_journal(tmp_path, small_journal(f"run-{number:04d}", f"prompt number {number}"))
    store = GatedStore(tmp_path)
    app = SessionsApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"4999")
        screen = browser(app)
        assert not screen.loaded
        assert screen.filter_field.value == "4999"
        store.gate.set()
        await until_loaded(app)
        await pilot.pause()
        assert len(screen.all_rows) == 5000
        assert listed(app) == ["run-4999"]


class BrokenStore(FileSessionStore):
    async def list(self) -> list[SessionSummary]:
        raise ConnectionRefusedError("nats://127.0.0.1:4222 refused the connection")


async def test_a_listing_that_fails_says_why(tmp_path: Path) -> None:
    app = SessionsApp(BrokenStore(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.pause()
        status = browser(app).query_one("#browser-status", Static)
        assert "cannot list sessions" in str(status.render())
        assert "refused the connection" in str(status.render())
        assert app.is_running


async def test_r_without_a_configuration_says_resuming_needs_one(tmp_path: Path) -> None:
    """The browser comes back as it was left, filter and highlight kept."""
    app = SessionsApp(three_sessions(tmp_path), resume_refused="resuming needs --config")
    posted: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=posted.append) as pilot:
        await until_loaded(app)
        await pilot.press(*"billing", "enter")
        before = browser(app)
        await pilot.press("r")
        await pilot.pause()
        assert "resuming needs --config" in notices(posted)
        assert browser(app) is before
        assert before.filter_field.value == "billing"
        assert listed(app) == ["billing-check"]
        assert app.is_running


async def test_r_dismisses_the_browser_with_the_highlighted_session(tmp_path: Path) -> None:
    app = ScreenHost(SessionBrowser(three_sessions(tmp_path)))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press(*"billing", "enter", "r")
        await pilot.pause()
        assert app.answer == "billing-check"
        assert not isinstance(app.screen, SessionBrowser)


async def test_q_dismisses_the_browser_with_nothing_chosen(tmp_path: Path) -> None:
    app = ScreenHost(SessionBrowser(three_sessions(tmp_path)))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("q")
        await pilot.pause()
        assert app.answer is None


async def test_r_leaves_with_the_highlighted_session_to_resume(tmp_path: Path) -> None:
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.press(*"billing", "enter", "r")
        await pilot.pause()
    assert app.return_value == "billing-check"


async def test_r_on_a_completed_session_says_it_cannot_resume(tmp_path: Path) -> None:
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.press(*"orders", "enter", "r")
        await pilot.pause()
        status = browser(app).query_one("#browser-status", Static)
        assert "orders-report is completed and cannot resume" in str(status.render())
        assert app.is_running


async def test_a_burst_of_keys_goes_into_the_filter(tmp_path: Path) -> None:
    """Keys arriving faster than the filter takes the focus (fast typing, a paste sent as
    keys) are all text: `r`, `d` and `q` among them neither resume, remove nor quit."""
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.pause()
        for character in "orders":
            app.post_message(events.Key(character, character))
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, SessionBrowser)
        assert browser(app).filter_field.value == "orders"
        assert listed(app) == ["orders-report"]


async def test_a_paste_into_the_list_goes_into_the_filter(tmp_path: Path) -> None:
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.pause()
        app.post_message(events.Paste("billing"))
        await pilot.pause()
        assert browser(app).filter_field.value == "billing"
        assert listed(app) == ["billing-check"]


async def test_escape_in_the_list_empties_the_filter(tmp_path: Path) -> None:
    app = SessionsApp(three_sessions(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await until_loaded(app)
        await pilot.press(*"billing", "enter")
        assert browser(app).session_list.has_focus
        assert listed(app) == ["billing-check"]
        await pilot.press("escape")
        assert browser(app).filter_field.value == ""
        assert len(listed(app)) == 3
