"""`fisk session show --transcript` and `fisk session browse` choose between the full screen and
lines by whether they run on a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.cli.main import main
from fisk_ai.workstation.sessions_app import SessionsApp
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


def test_browse_without_a_configuration_refuses_to_resume(
    tmp_path: Path, opened: list[SessionsApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["session", "--state-dir", str(tmp_path), "browse"]) == 0
    assert "--config" in opened[0].resume_refused


def test_a_session_chosen_to_resume_runs_full_screen_with_the_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fisk_ai.serve.hosted import RunOptions
    from fisk_ai.sessions import FileSessionStore

    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.yaml").write_text("placeholder: true\n", encoding="utf-8")
    apps: list[SessionsApp] = []
    runs: list[RunOptions] = []

    def chosen(self: SessionsApp, *args: object, **kwargs: object) -> str:
        apps.append(self)
        return "orders-report"

    def ran(options: RunOptions) -> int:
        runs.append(options)
        return 0

    monkeypatch.setattr("fisk_ai.cli.session._on_terminal", lambda: True)
    monkeypatch.setattr("fisk_ai.cli.session._store", lambda args: FileSessionStore(tmp_path))
    monkeypatch.setattr(SessionsApp, "run", chosen)
    monkeypatch.setattr("fisk_ai.workstation.host.run_full_screen", ran)
    assert main(["session", "browse"]) == 0
    assert apps[0].resume_refused == ""
    assert [(run.config, run.resume) for run in runs] == [("agent.yaml", "orders-report")]
