"""HOST. Pane status reporting for tmux and zellij.

``Reporter(identity, detect(os.environ))`` is the whole API a caller needs: outside a multiplexer
``detect`` returns None and the reporter accepts reports and sends them nowhere.
"""

from fisk_ai.multiplex.adapters import TmuxPane, ZellijPane, detect
from fisk_ai.multiplex.reporter import Multiplexer, PaneReport, PaneState, Reporter, pane_title

__all__ = [
    "Multiplexer",
    "PaneReport",
    "PaneState",
    "Reporter",
    "TmuxPane",
    "ZellijPane",
    "detect",
    "pane_title",
]
