"""Every test starts from the same environment, whatever the developer's shell holds."""

import os
from pathlib import Path

import textual.constants

from tests.conftest import TEST_TERM


def test_home_and_state_are_fresh_directories_of_the_test() -> None:
    home = Path(os.environ["HOME"])
    assert Path(os.environ["XDG_STATE_HOME"]) == home / ".local" / "state"
    assert not any(Path(os.environ["XDG_STATE_HOME"]).iterdir())


def test_the_terminal_looks_like_a_plain_xterm_with_no_theme_of_its_own() -> None:
    assert os.environ["TERM"] == TEST_TERM
    assert not {"COLORFGBG", "NO_COLOR", "TEXTUAL_THEME", "TMUX"} & set(os.environ)


def test_apps_built_in_a_test_start_with_animations_off() -> None:
    assert textual.constants.TEXTUAL_ANIMATIONS == "none"
