"""SessionsApp: the full-screen session browser and the read-only transcript viewer, for
``fisk session browse`` and ``fisk session show ID --transcript`` on a terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

if TYPE_CHECKING:
    from fisk_ai.sessions import Conversation, SessionStore


class SessionsApp(App[str]):
    """Opens on the transcript of ``conversation`` when one is given, else on the browser
    listing ``store``. The app's result is the id of a session chosen with ``r`` to resume, or
    None; ``resume_refused`` says why ``r`` cannot resume instead."""

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
    ) -> None:
        super().__init__()
        self.resume_refused = resume_refused
        if store is None and conversation is None:
            raise ValueError("SessionsApp needs a store to browse or a conversation to show")
        self.store = store
        self.conversation = conversation

    def on_mount(self) -> None:
        if self.conversation is not None:
            from fisk_ai.screens.transcript import TranscriptScreen

            self.push_screen(TranscriptScreen(self.conversation, closes_app=True))
        else:
            from fisk_ai.screens.sessions import SessionBrowser

            assert self.store is not None
            self.push_screen(SessionBrowser(self.store, resume_refused=self.resume_refused))
