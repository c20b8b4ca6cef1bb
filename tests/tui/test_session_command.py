"""`fisk session show --transcript` and `fisk session browse` choose between the full screen and
lines by whether they run on a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.cli.main import main
from fisk_ai.tui.sessions_app import SessionsApp
from tests.screens.journals import stream_report, write_journal


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[SessionsApp]:
    """Pretend to be on a terminal, and keep each app the command would have run."""
    apps: list[SessionsApp] = []
    monkeypatch.setattr("fisk_ai.cli.session._on_terminal", lambda: True)
    monkeypatch.setattr(SessionsApp, "run", lambda self, *a, **k: apps.append(self))
    monkeypatch.delenv("NO_TUI", raising=False)
    return apps


def show(state: Path, *extra: str) -> int:
    return main(["session", "--state-dir", str(state), "show", "orders-report", *extra])


def test_show_transcript_on_a_terminal_opens_the_viewer(
    tmp_path: Path, opened: list[SessionsApp], capsys: pytest.CaptureFixture[str]
) -> None:
    write_journal(tmp_path, stream_report())
    assert show(tmp_path, "--transcript") == 0
    assert [app.conversation.run_id for app in opened if app.conversation] == ["orders-report"]
    assert "--- transcript ---" not in capsys.readouterr().out


def test_show_transcript_with_no_tui_prints_lines(
    tmp_path: Path, opened: list[SessionsApp], capsys: pytest.CaptureFixture[str]
) -> None:
    write_journal(tmp_path, stream_report())
    assert show(tmp_path, "--transcript", "--no-tui") == 0
    assert not opened
    assert "ORDERS holds 1260 messages." in capsys.readouterr().out


def test_browse_on_a_terminal_opens_the_browser(tmp_path: Path, opened: list[SessionsApp]) -> None:
    assert main(["session", "--state-dir", str(tmp_path), "browse"]) == 0
    assert len(opened) == 1
    assert opened[0].conversation is None


def test_browse_off_a_terminal_names_the_line_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["session", "--state-dir", str(tmp_path), "browse"]) != 0
    assert "fisk session ls" in capsys.readouterr().err
