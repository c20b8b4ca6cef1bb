"""Which Textual theme the workstation starts in: light on a light terminal, dark otherwise.

Every colour the workstation draws is a theme variable (``$primary``, ``$text-error``, ...), so
the theme is the one switch. Textual does not ask the terminal for its background; the
terminals that say it (rxvt, Konsole, iTerm2 and others) set ``COLORFGBG`` to ``FG;BG`` colour
numbers, where a background of 7 or 15 is white. ``TEXTUAL_THEME``, Textual's own setting, wins
over the guess, and the command palette can change the theme while the app runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

DARK_THEME = "textual-dark"
LIGHT_THEME = "textual-light"
LIGHT_BACKGROUNDS = frozenset({"7", "15"})


def terminal_theme(environ: Mapping[str, str] | None = None) -> str:
    """The theme for the terminal ``environ`` describes (the process environment by default)."""
    environ = os.environ if environ is None else environ
    chosen = environ.get("TEXTUAL_THEME", "")
    if chosen:
        return chosen
    background = environ.get("COLORFGBG", "").rpartition(";")[2].strip()
    return LIGHT_THEME if background in LIGHT_BACKGROUNDS else DARK_THEME
