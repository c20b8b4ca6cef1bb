"""Issue 14, the items an item-by-item audit found still open: the status bar's ctrl-d hint,
the group's flags after `browse`, the browser's rows, the exit summary, and the warnings."""

from __future__ import annotations

import gc
import warnings
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from fisk_ai.agent.events import TextEvent
from fisk_ai.cli.main import main
from fisk_ai.screens import run as run_module
from fisk_ai.screens.sessions import SessionBrowser
from fisk_ai.sessions import FileSessionStore
from fisk_ai.tui.setup import ToolRow
from fisk_ai.tui.status import Counters, RunState, StatusLine
from fisk_ai.tui.transcript import Transcript
from fisk_ai.workstation.app import FiskApp
from fisk_ai.workstation.sessions_app import SessionsApp
from tests.fakes.provider import Reply, answer, call, calls
from tests.screens.journals import conversation_of, stream_report, write_journal
from tests.screens.test_run import SETUP, HeldBridge
from tests.tui.test_app import screen_text, send, settle
from tests.tui.test_nothing_lost import texts_of
from tests.tui.test_resume import first_conversation
from tests.tui.test_rough_edges import toasts
from tests.tui.test_where_you_are import status_text
from tests.tui.test_workstation_keys import GatedProvider
from tests.tui.workstation import SIZE, build_app, running


@asynccontextmanager
async def gated(
    tmp_path: Path, replies: Sequence[Reply], *, resume: str = ""
) -> AsyncIterator[tuple[FiskApp, Pilot[None], GatedProvider]]:
    """The workstation whose model calls wait for ``provider.gate``."""
    provider = GatedProvider(replies)
    app, agent = build_app(tmp_path, provider, resume=resume)
    try:
        async with app.run_test(size=SIZE) as pilot:
            yield app, pilot, provider
    finally:
        await agent.close()


async def until_resuming(app: FiskApp, pilot: Pilot[None], session: str) -> None:
    marker = f'--- resuming "{session}" ---'
    while marker not in screen_text(app):
        await pilot.pause()


async def test_the_status_bar_says_ctrl_d_done_while_the_chat_bar_waits(tmp_path: Path) -> None:
    async with running(tmp_path, [answer("done")]) as (app, pilot):
        await settle(app, pilot)
        assert app.run_screen.run_state is RunState.AWAITING_INPUT
        assert status_text(app).endswith("ctrl-d done   F1 help")


def test_ctrl_d_done_is_said_only_while_input_is_awaited_and_fits_80_columns() -> None:
    waiting = StatusLine(RunState.AWAITING_INPUT, Counters(), "claude-sonnet-4-5", "2a9W" * 7)
    assert waiting.text(80).startswith("[awaiting input]")
    assert waiting.text(80).endswith("ctrl-d done   ? help")
    assert "ctrl-d" not in StatusLine(RunState.RUNNING).text()


def test_browse_takes_the_groups_flags_after_the_action(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[SessionsApp] = []
    monkeypatch.setattr("fisk_ai.cli.session._on_terminal", lambda: True)
    monkeypatch.setattr(SessionsApp, "run", lambda self, *a, **k: opened.append(self))
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "elsewhere.yaml"
    config.write_text("identity: ops\nsystem_prompt: hi\n", encoding="utf-8")
    before = main(["session", "--state-dir", str(tmp_path), "browse"])
    after = main(["session", "browse", "--state-dir", str(tmp_path), "--config", str(config)])
    assert (before, after) == (0, 0)
    # Named after the action, the configuration is the one a resume would run with.
    assert "--config" in opened[0].resume_refused
    assert opened[1].resume_refused == ""


def test_r_in_the_browser_resumes_with_the_flags_fisk_run_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fisk_ai.serve.hosted import RunOptions

    resumed: list[RunOptions] = []

    def run_full_screen(options: RunOptions) -> int:
        resumed.append(options)
        return 0

    monkeypatch.setattr("fisk_ai.cli.session._on_terminal", lambda: True)
    monkeypatch.setattr(SessionsApp, "run", lambda self, *a, **k: "s-chosen")
    monkeypatch.setattr("fisk_ai.workstation.host.run_full_screen", run_full_screen)
    config = tmp_path / "agent.yaml"
    config.write_text("identity: ops\nsystem_prompt: hi\n", encoding="utf-8")
    flags = ["--replay", "c.cassette", "--force", "--thinking", "--tool-output"]
    browse = ["session", "browse", "--state-dir", str(tmp_path), "--config", str(config)]
    assert main([*browse, *flags, "--api-key", "k-1", "--no-telemetry"]) == 0

    (options,) = resumed
    assert options.resume == "s-chosen"
    assert options.config == str(config)
    assert options.provider.replay == "c.cassette"
    assert options.provider.api_key == "k-1"
    assert options.force and options.thinking and options.tool_output and options.no_telemetry


# The session browser's rows


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


# The summary on exit


async def test_leaving_before_the_first_event_still_counts_a_summary(tmp_path: Path) -> None:
    async with gated(tmp_path, [answer("never seen")]) as (app, pilot, _):
        await pilot.pause()
        await pilot.press("ctrl+c", "ctrl+c")
        await pilot.pause()
        session = app.bridge.session_id
    outcome = app.outcome
    # Left mid-turn, or just after the first Ctrl-C ended the turn: a summary either way.
    assert session
    assert outcome.result is not None
    assert outcome.result.session_id == session


class Clock:
    """Stands in for the screen's monotonic clock, so the test says how long each wait was."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


async def test_the_latency_counts_the_turns_and_not_the_wait_for_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(run_module, "time", clock)
    async with gated(tmp_path, [answer("first"), answer("second")]) as (app, pilot, provider):
        await pilot.pause()
        clock.now += 3  # the first turn waits 3 s for the model
        provider.gate.set()
        await settle(app, pilot)
        clock.now += 600  # ten minutes with the chat bar open
        provider.gate.clear()
        await send(app, pilot, "again")
        clock.now += 2
        provider.gate.set()
        await settle(app, pilot)
        clock.now += 600
        await pilot.press("ctrl+d")
    assert app.outcome.working_seconds == 5


async def test_the_counters_read_the_stored_conversation_as_soon_as_it_resumes(
    tmp_path: Path,
) -> None:
    session = await first_conversation(tmp_path)
    async with gated(tmp_path, [answer("still fine")], resume=session) as (app, pilot, _):
        await until_resuming(app, pilot, session)
        counters = app.run_screen.counters
        assert counters.model_calls == 1
        assert counters.tokens > 0
        assert "tokens=0" not in status_text(app)


# A prompt after a suspended turn


async def test_a_prompt_after_a_suspended_turn_is_drawn_after_it_and_answered_once(
    tmp_path: Path,
) -> None:
    replies = [
        calls(call("c1", "stream_info", {"stream": "ORDERS"}), text="checking"),
        answer("ORDERS is fine"),
        answer("never asked for"),
    ]
    async with gated(tmp_path, replies) as (app, pilot, provider):
        await pilot.pause()
        await pilot.press("ctrl+c")
        provider.gate.set()
        await settle(app, pilot)
        assert app.run_screen.run_state is RunState.SUSPENDED
        await send(app, pilot, "next please")
        await settle(app, pilot)
        text = screen_text(app)
    # One model call takes the stopped turn's results and the new prompt together, so its
    # answer is the prompt's, drawn below it.
    assert provider.calls == 2
    assert texts_of(provider, 1)[-1] == "next please"
    assert text.index("--- run suspended ---") < text.index("> next please")
    assert text.index("> next please") < text.index("ORDERS is fine")
    assert "never asked for" not in text


# Counted words


async def test_one_match_is_one_matching_line_on_the_run_screen_and_in_the_viewer() -> None:
    app = FiskApp(HeldBridge(), SETUP)
    async with app.run_test(size=SIZE) as pilot:
        app.run_screen.bridge.emit(TextEvent("apple\nbanana"))
        await pilot.pause()
        app.run_screen.view.focus()
        await pilot.press("slash", *"banana", "enter")
        await pilot.pause()
        shown = toasts(app)
    assert "1 matching line (1 of 1)" in shown
    assert not any("1 matching lines" in toast for toast in shown)
    viewer = SessionsApp(conversation=conversation_of(stream_report()))
    async with viewer.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"1260", "enter")
        await pilot.pause()
        found = str(viewer.screen.query_one("#viewer-status", Static).render())
    assert "1 matching line " in found + " "
    assert "1 matching lines" not in found


# The session browser leaves no coroutine behind


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


# Blank rows around quotes, lists and code


def test_a_quote_after_a_paragraph_opens_with_its_text_not_an_empty_bar() -> None:
    text = "Here is the plan.\n\n> a quoted line\n>\n> and another\n\n- one\n- two\n\n```\nls\n```"
    transcript = Transcript()
    transcript.add_event(TextEvent(text))
    rows = [row.text for row in transcript.rows(0, 100, 60)]
    assert rows == [
        "Here is the plan.",
        "",
        "\u2502 a quoted line",
        "\u2502",
        "\u2502 and another",
        "",
        "\u2022 one",
        "\u2022 two",
        "",
        "  ls",
    ]


# The side panel's tools at 80 columns


async def test_a_long_tool_source_is_cut_to_one_row_in_the_narrow_strip() -> None:
    source = "application_path /srv/ops/applications/fleet.yaml"
    tools = (
        ToolRow("stream_rm", source, gated=True),
        ToolRow("consumer_report_for_every_stream_in_the_account", source, gated=False),
    )
    app = FiskApp(HeldBridge(), replace(SETUP, tools=tools))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        panel = app.run_screen.side_panel
        width = panel.scrollable_content_region.width
        facts = str(panel.query_one("#side-facts", Static).render()).splitlines()
    rows = facts[1:3]
    assert all(len(row) <= width for row in rows)
    assert rows[0].startswith("  stream_rm")
    assert rows[0].endswith("\u2026  gated")
    assert rows[1].startswith("  consumer\u2026")
    assert rows[1].endswith("\u2026")


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
