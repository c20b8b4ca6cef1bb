"""SessionsApp: the full-screen session browser and the read-only transcript viewer, for
``fisk session browse`` and ``fisk session show ID --transcript`` on a terminal."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

if TYPE_CHECKING:
    from fisk_ai.sessions import Conversation, SessionStore

BROWSER = "browser"


class SessionsApp(App[str]):
    """Opens on the transcript of ``conversation`` when one is given, else on the browser
    listing ``store``. The app's result is the id of a session chosen with ``r`` to resume, or
    None; ``resume_refused`` says why a chosen session cannot resume here, and the browser
    stays up instead. ``now`` is the browser's clock for its relative times (a fixed one in
    tests); without it the browser reads the real one."""

    ENABLE_COMMAND_PALETTE = False
    TITLE = "fisk-ai sessions"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "quit", "Quit", priority=True, show=False),
    ]

    def __init__(
        self,
        store: SessionStore | None = None,
        *,
        conversation: Conversation | None = None,
        resume_refused: str = "",
        thinking: bool = False,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        from fisk_ai.tui.theme import terminal_theme

        super().__init__()
        self.theme = terminal_theme()
        self.resume_refused = resume_refused
        self.thinking = thinking
        if store is None and conversation is None:
            raise ValueError("SessionsApp needs a store to browse or a conversation to show")
        self.store = store
        self.conversation = conversation
        self.now = now

    def on_mount(self) -> None:
        if self.conversation is not None:
            from fisk_ai.screens.transcript import TranscriptScreen

            self.push_screen(
                TranscriptScreen(self.conversation, thinking=self.thinking), self._viewer_closed
            )
        else:
            from fisk_ai.screens.sessions import SessionBrowser

            assert self.store is not None
            # Installed, the browser outlives its dismissal and comes back with its filter
            # and highlight when a chosen session cannot resume.
            self.install_screen(SessionBrowser(self.store, now=self.now), BROWSER)
            self.push_screen(BROWSER, self._chosen)

    def _viewer_closed(self, _: None) -> None:
        self.exit()

    def _chosen(self, session_id: str | None) -> None:
        if session_id and self.resume_refused:
            self.notify(self.resume_refused, severity="warning", markup=False)
            # Later, so the dismissal has finished taking the browser off the stack.
            self.call_later(self.push_screen, BROWSER, self._chosen)
            return
        self.exit(session_id)
