"""FiskApp: the full-screen workstation around one conversation.

The app owns the keys that must work everywhere, even with a question up. Nothing typed is
thrown away by a key that does not say so: Ctrl-C empties a chat bar that holds a draft, then
stops the turn in flight, and leaves only when pressed again on an empty bar; Ctrl-D leaves only
from an empty bar. Ctrl-L empties the screen. What the run left
behind for the normal buffer (the answer, the resume hint, the counters) is read from
``outcome`` once the app has stopped.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.events import Print

from fisk_ai.agent.outcome import Abandoned, RunResult
from fisk_ai.screens.question import QuestionModal
from fisk_ai.screens.run import RunScreen
from fisk_ai.tui.bridge import RunBridge
from fisk_ai.tui.setup import RunSetup
from fisk_ai.tui.status import Counters, RunState
from fisk_ai.tui.theme import terminal_theme
from fisk_ai.workstation.commands import RunCommands

DRAFT_DISCARDED = "chat bar emptied; Ctrl-Z brings it back"
LEAVE_ARMED = "press Ctrl-C again to leave (or Ctrl-D)"


@dataclass(frozen=True)
class ScreenEnding:
    """How the full-screen run ended, for the lines reprinted after it."""

    session_id: str
    result: RunResult | None
    answer: str
    counters: Counters
    state: RunState
    error: str = ""
    left_mid_turn: bool = False
    abandoned: tuple[str, ...] = ()
    working_seconds: float = 0.0
    """How long the turns ran; the time the chat bar waited is not the run's latency."""


class FiskApp(App[None]):
    CSS_PATH = "app.tcss"
    # The command palette (Ctrl-P, Textual's own key) offers every action with its key.
    COMMANDS = App.COMMANDS | {RunCommands}
    TITLE = "fisk-ai"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "Stop", priority=True, show=False),
        Binding("ctrl+d", "leave", "Leave", priority=True, show=False),
        Binding("ctrl+l", "clear_screen", "Clear screen", priority=True, show=False),
    ]

    def __init__(self, bridge: RunBridge, setup: RunSetup) -> None:
        super().__init__()
        self.theme = terminal_theme()
        self.bridge = bridge
        self.setup = setup
        self.run_screen = RunScreen(bridge, setup)
        self.captured_stderr: list[str] = []
        """What was written to stderr while the app ran, to be written out after it."""
        self.first_frame = asyncio.Event()
        """Set once the first frame is on the terminal: startup's slow work waits for it."""

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            # Typing meant for the chat bar is sent to it as the app reads it, so it joins the
            # bar's queue in the order typed: a widget handing it on later, or a focus change
            # made later, would land it behind keys typed after it.
            screen = self.screen
            if screen is self.run_screen and screen.takes_typing(event):
                screen.set_focus(screen.chat, scroll_visible=False)
        await super().on_event(event)

    def on_mount(self) -> None:
        self.begin_capture_print(self, stdout=False, stderr=True)
        self.push_screen(self.run_screen)

    def on_ready(self) -> None:
        self.first_frame.set()

    def on_print(self, event: Print) -> None:
        self.captured_stderr.append(event.text)

    def action_interrupt(self) -> None:
        screen = self.run_screen
        # A question still in its guard was not seen yet: the press was meant for the bar.
        question = self.screen
        unseen_question = isinstance(question, QuestionModal) and not question.answerable.is_set()
        if self.screen is screen or unseen_question:
            # Decided in the bar's own queue, behind the keys typed before it: whether there is
            # a draft to empty depends on them.
            screen.chat.call_later(self._interrupt, chat_shown=True)
        else:
            self._interrupt(chat_shown=False)

    def _interrupt(self, *, chat_shown: bool) -> None:
        screen = self.run_screen
        if chat_shown and screen.chat.discard_draft():
            self.notify(DRAFT_DISCARDED, timeout=3, markup=False)
        elif screen.turn_running and not screen.stop_requested:
            screen.request_stop()
        elif screen.stop_requested or screen.leave_armed:
            self.exit()
        else:
            screen.leave_armed = True
            self.notify(LEAVE_ARMED, timeout=3, markup=False)

    def action_leave(self) -> None:
        self.run_screen.chat.call_later(self._leave)

    def _leave(self) -> None:
        chat = self.run_screen.chat
        if not chat.text:
            self.exit()
        elif chat.has_focus:
            # A draft is there: Ctrl-D is the editor's delete, never a way to lose it.
            chat.action_delete_right()

    def action_clear_screen(self) -> None:
        self.run_screen.clear_screen()

    @property
    def outcome(self) -> ScreenEnding:
        screen = self.run_screen
        state = screen.run_state
        if state is RunState.AWAITING_INPUT and screen.last_result is not None:
            state = RunState.COMPLETE
        result = screen.last_result
        if screen.turn_running and result is not None:
            # Left mid-turn: the totals stand, but how the turn before ended is old news.
            result = replace(result, outcome=Abandoned())
        elif screen.turn_running and self.bridge.session_id:
            # Left during the first turn (even before its first event): what it counted so
            # far still makes a summary.
            counters = screen.counters
            result = RunResult(
                Abandoned(),
                self.bridge.session_id,
                usage=counters.usage,
                llm_calls=counters.model_calls,
                tool_calls=counters.tool_calls,
            )
        return ScreenEnding(
            session_id=self.bridge.session_id or (result.session_id if result else ""),
            result=result,
            answer=screen.last_answer,
            counters=screen.counters,
            state=state,
            error=screen.error,
            left_mid_turn=screen.turn_running,
            abandoned=tuple(screen.abandoned),
            working_seconds=screen.working_seconds,
        )
