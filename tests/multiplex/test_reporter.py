from __future__ import annotations

import asyncio
import logging

import pytest

from fisk_ai.multiplex import PaneReport, PaneState, Reporter


class RecordingPane:
    """Records what it was asked to deliver; the first delivery can be held open."""

    name = "recording"

    def __init__(self, *, hold_first: bool = False) -> None:
        self.delivered: list[PaneReport] = []
        self.restored = False
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        if not hold_first:
            self.release.set()

    async def deliver(self, report: PaneReport) -> None:
        self.started.set()
        await self.release.wait()
        self.delivered.append(report)

    async def restore(self) -> None:
        self.restored = True


class BrokenPane:
    name = "broken"

    def __init__(self) -> None:
        self.attempts = 0

    async def deliver(self, report: PaneReport) -> None:
        self.attempts += 1
        raise OSError("no server on that socket")

    async def restore(self) -> None:
        raise OSError("no server on that socket")


class StuckPane:
    name = "stuck"

    async def deliver(self, report: PaneReport) -> None:
        await asyncio.Event().wait()

    async def restore(self) -> None:
        await asyncio.Event().wait()


async def test_reports_made_during_a_delivery_collapse_to_the_newest() -> None:
    pane = RecordingPane(hold_first=True)
    reporter = Reporter("alpha", pane)
    reporter.report(PaneState.WORKING)
    await pane.started.wait()
    reporter.report(PaneState.BLOCKED, "approve: rm -rf build")
    reporter.report(PaneState.IDLE)
    pane.release.set()
    await reporter.aclose()
    assert [report.state for report in pane.delivered] == [PaneState.WORKING, PaneState.IDLE]


async def test_report_returns_before_the_delivery() -> None:
    pane = RecordingPane(hold_first=True)
    reporter = Reporter("alpha", pane)
    reporter.report(PaneState.WORKING)
    assert pane.delivered == []
    pane.release.set()
    await reporter.flush()
    assert [report.state for report in pane.delivered] == [PaneState.WORKING]


async def test_a_failing_multiplexer_never_raises_into_the_caller(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pane = BrokenPane()
    reporter = Reporter("alpha", pane)
    with caplog.at_level(logging.DEBUG, logger="fisk_ai.multiplex"):
        reporter.report(PaneState.WORKING)
        await reporter.flush()
        reporter.report(PaneState.IDLE)
        await reporter.aclose()
    assert pane.attempts == 2
    assert "no server on that socket" in caplog.text


async def test_a_failed_report_is_tried_again_when_reported_again() -> None:
    pane = BrokenPane()
    reporter = Reporter("alpha", pane)
    reporter.report(PaneState.IDLE)
    await reporter.flush()
    reporter.report(PaneState.IDLE)
    await reporter.aclose()
    assert pane.attempts == 2


async def test_a_delivery_that_hangs_is_dropped_at_the_timeout() -> None:
    reporter = Reporter("alpha", StuckPane(), delivery_timeout=0.05)
    reporter.report(PaneState.BLOCKED, "which branch?")
    await reporter.flush()
    reporter.report(PaneState.IDLE)
    await reporter.aclose()


async def test_close_gives_up_on_a_delivery_that_outlasts_its_bound() -> None:
    reporter = Reporter("alpha", StuckPane(), delivery_timeout=60, close_timeout=0.05)
    reporter.report(PaneState.WORKING)
    await reporter.aclose()
    await reporter.flush()


async def test_an_unchanged_report_is_not_sent_twice() -> None:
    pane = RecordingPane()
    reporter = Reporter("alpha", pane)
    reporter.report(PaneState.WORKING)
    await reporter.flush()
    reporter.report(PaneState.WORKING)
    await reporter.aclose()
    assert len(pane.delivered) == 1


async def test_reports_after_close_are_dropped() -> None:
    pane = RecordingPane()
    reporter = Reporter("alpha", pane)
    await reporter.aclose()
    reporter.report(PaneState.WORKING)
    await reporter.flush()
    assert pane.delivered == []


async def test_without_a_multiplexer_reports_go_nowhere() -> None:
    reporter = Reporter("alpha", None)
    reporter.report(PaneState.BLOCKED, "approve?")
    await reporter.flush()
    await reporter.aclose()
    assert reporter.multiplexer is None


def test_a_report_outside_an_event_loop_is_dropped_without_raising() -> None:
    Reporter("alpha", RecordingPane()).report(PaneState.WORKING)


async def test_the_reason_is_one_sanitised_capped_line() -> None:
    pane = RecordingPane()
    reporter = Reporter("alpha", pane)
    reporter.report(PaneState.BLOCKED, "run\n\x1b[31mrm\x1b[0m -rf\tbuild?\x07 " + "x" * 300)
    await reporter.aclose()
    reason = pane.delivered[0].reason
    assert reason.startswith("run rm -rf build? xxx")
    assert "\n" not in reason and "\x1b" not in reason
    assert len(reason) <= 123


async def test_the_reason_is_kept_only_while_blocked() -> None:
    pane = RecordingPane()
    reporter = Reporter("alpha", pane)
    reporter.report(PaneState.WORKING, "ignored")
    await reporter.aclose()
    assert pane.delivered[0].reason == ""


async def test_the_pane_title_names_the_agent_and_its_state() -> None:
    pane = RecordingPane()
    reporter = Reporter("release\x1b]2;evil\x07-bot\n", pane)
    reporter.report(PaneState.BLOCKED, "approve?")
    await reporter.aclose()
    assert pane.delivered[0].title == "fisk:release-bot blocked"


async def test_without_an_identity_the_title_is_the_program_and_state() -> None:
    pane = RecordingPane()
    reporter = Reporter("", pane)
    reporter.report(PaneState.IDLE)
    await reporter.aclose()
    assert pane.delivered[0].title == "fisk idle"


async def test_closing_gives_the_pane_back_once_something_was_reported() -> None:
    reported, silent = RecordingPane(), RecordingPane()
    Reporter("alpha", silent)
    reporter = Reporter("alpha", reported)
    reporter.report(PaneState.IDLE)
    await reporter.aclose()
    assert reported.restored
    assert not silent.restored


async def test_a_pane_that_cannot_be_given_back_does_not_hold_up_the_close() -> None:
    for pane in (BrokenPane(), StuckPane()):
        reporter = Reporter("alpha", pane, delivery_timeout=0.05, close_timeout=0.05)
        reporter.report(PaneState.IDLE)
        await reporter.aclose()
