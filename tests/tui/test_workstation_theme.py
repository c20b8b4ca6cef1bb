"""Issue 14: one theme, following the terminal's background, and no colour outside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import fisk_ai
from fisk_ai.tui.theme import DARK_THEME, LIGHT_THEME, terminal_theme
from fisk_ai.workstation.app import FiskApp
from tests.screens.held_bridge import SETUP, SIZE, HeldBridge


def test_a_white_background_in_colorfgbg_chooses_the_light_theme() -> None:
    assert terminal_theme({"COLORFGBG": "0;15"}) == LIGHT_THEME
    assert terminal_theme({"COLORFGBG": "0;default;7"}) == LIGHT_THEME


def test_a_dark_or_unknown_background_chooses_the_dark_theme() -> None:
    assert terminal_theme({"COLORFGBG": "15;0"}) == DARK_THEME
    assert terminal_theme({}) == DARK_THEME


def test_textual_theme_overrides_the_guess() -> None:
    assert terminal_theme({"COLORFGBG": "0;15", "TEXTUAL_THEME": "nord"}) == "nord"


async def test_the_workstation_starts_light_on_a_light_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TEXTUAL_THEME", raising=False)
    monkeypatch.setenv("COLORFGBG", "0;15")
    app = FiskApp(HeldBridge(), SETUP)
    async with app.run_test(size=SIZE):
        assert app.theme == LIGHT_THEME
        assert not app.current_theme.dark


async def test_the_session_browser_starts_light_on_a_light_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fisk_ai.workstation.sessions_app import SessionsApp
    from tests.screens.journals import conversation_of, stream_report

    monkeypatch.delenv("TEXTUAL_THEME", raising=False)
    monkeypatch.setenv("COLORFGBG", "0;15")
    app = SessionsApp(conversation=conversation_of(stream_report()))
    async with app.run_test(size=SIZE):
        assert app.theme == LIGHT_THEME


# A colour named outright (a name, a hex value, rgb()) rather than a theme variable.
NAMED_COLOUR = re.compile(
    r"(?:color|background|border[a-z-]*|tint)\s*:[^;$]*"
    r"\b(?:black|white|red|green|yellow|blue|cyan|magenta|ansi_\w+|#[0-9a-f]{3,8}|rgba?\()",
    re.IGNORECASE,
)


def test_the_workstation_styles_name_no_colour_outside_the_theme() -> None:
    package = Path(fisk_ai.__file__).parent
    sheets = [package / "workstation" / "app.tcss", package / "screens" / "run.tcss"]
    modules = [
        package / "tui" / "widgets" / "transcript_view.py",
        package / "tui" / "widgets" / "side_panel.py",
        package / "tui" / "widgets" / "chat_input.py",
        package / "screens" / "approval.py",
        package / "screens" / "question.py",
        package / "screens" / "help.py",
        package / "screens" / "transcript.py",
        package / "screens" / "sessions.py",
        package / "screens" / "knowledge.py",
    ]
    offending = [
        f"{path.name}: {match.group(0)}"
        for path in [*sheets, *modules]
        for match in NAMED_COLOUR.finditer(path.read_text(encoding="utf-8"))
    ]
    assert offending == []
