"""The chat bar of the run screen. It owns every character typed into it: Enter moves the text
into the bar's outbox and empties the bar in one step, so a key that arrives while the screen is
still acting on the last Enter lands in an empty bar rather than being wiped with it."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import var
from textual.widgets import TextArea

from fisk_ai.tui.chat_commands import ChatCommand, command_candidates, complete_command

CHAT_PLACEHOLDER = "Ready for a follow-up. Enter sends, Ctrl-J a newline, /help for commands"

RUNNING_PLACEHOLDER = "Type ahead: Enter queues it, sent when the turn ends; Esc stops the turn"


class ChatInput(TextArea):
    """The chat bar: Enter sends (or queues, during a turn), Ctrl-J starts a new line (and
    Shift-Enter or Alt-Enter, where the terminal reports them apart from Enter), Up on the first
    line or Down on the last recall this conversation's earlier prompts, and Up in an empty bar
    takes the last queued prompt back to edit it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Priority, so Enter never reaches TextArea's own newline insertion.
        Binding("enter", "submit", "Send", show=False, priority=True),
        Binding("ctrl+j,shift+enter,alt+enter", "newline", "Newline", show=False, priority=True),
        Binding("pageup", "screen.scroll_transcript('page_up')", "Scroll up", show=False),
        Binding("pagedown", "screen.scroll_transcript('page_down')", "Scroll down", show=False),
        Binding("ctrl+home", "screen.scroll_transcript('top')", "Top", show=False),
        Binding("ctrl+end", "screen.scroll_transcript('bottom')", "Bottom", show=False),
        Binding("tab", "complete_command", "Complete the command", show=False, priority=True),
        Binding("ctrl+r", "screen.search_history", "Search prompt history", show=False),
        Binding("ctrl+g", "screen.edit_in_editor", "Edit in $EDITOR", show=False),
    ]

    class Submitted(Message):
        """Enter put a prompt in the outbox; the screen takes it with ``take_next``."""

        def __init__(self, chat: ChatInput) -> None:
            super().__init__()
            self.chat = chat

        @property
        def control(self) -> ChatInput:
            return self.chat

    class QueueChanged(Message):
        """The prompts waiting for the turn to end changed; ``queued`` is all of them."""

        def __init__(self, chat: ChatInput, queued: tuple[str, ...]) -> None:
            super().__init__()
            self.chat = chat
            self.queued = queued

        @property
        def control(self) -> ChatInput:
            return self.chat

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            id=id, placeholder=CHAT_PLACEHOLDER, soft_wrap=True, highlight_cursor_line=False
        )
        self.sent: list[str] = []
        self._recall_index = 0
        self._draft = ""
        """What the bar held when Up started recalling, given back when Down returns past the
        newest prompt."""
        self._outbox: list[str] = []
        """Prompts Enter took from the bar that the screen has not taken yet, oldest first."""

    running: var[bool] = var(False)
    """A turn is in flight: what Enter takes waits in the outbox, shown as queued."""

    def watch_running(self, running: bool) -> None:
        self.placeholder = RUNNING_PLACEHOLDER if running else CHAT_PLACEHOLDER

    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    @property
    def queued(self) -> tuple[str, ...]:
        """The prompts waiting in the outbox, oldest first."""
        return tuple(self._outbox)

    async def on_key(self, event: events.Key) -> None:
        # The app runs a key's binding once the key has bubbled up to it, behind the keys typed
        # after it that the bar has already taken: Backspace would delete a later character.
        # The bar's own editing and scrolling keys act here instead, in the order typed.
        if event.is_printable:
            return
        active = self.screen.active_bindings.get(event.key)
        if active is None or active.node is not self or active.binding.priority:
            return
        event.stop()
        event.prevent_default()
        if active.enabled:
            await self.run_action(active.binding.action)

    def action_submit(self) -> None:
        # A priority binding runs as the app reads the key, before the keys typed ahead of it
        # are in the bar: the submission waits behind them in the bar's own queue.
        self.call_later(self._submit)

    def _submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        self._outbox.append(text)
        self.clear()
        self._queue_changed()
        self.post_message(self.Submitted(self))

    def action_newline(self) -> None:
        self.call_later(self.insert, "\n")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "complete_command":
            # Only a /word to complete takes Tab; otherwise it moves the focus as anywhere.
            return bool(command_candidates(self.text, self.cursor_location))
        return super().check_action(action, parameters)

    def action_complete_command(self) -> None:
        completed = complete_command(self.text, self.cursor_location)
        if completed is not None:
            text, cursor = completed
            self.text = text
            self.cursor_location = cursor

    def replace_text(self, text: str) -> None:
        """Put ``text`` in the bar in place of what it holds, as one edit Ctrl-Z undoes."""
        self.replace(text, (0, 0), self.document.end)
        self.move_cursor(self.document.end)

    def on_text_area_changed(self) -> None:
        # The commands a /word may be the start of, in the bar's title, Tab completing them.
        candidates = command_candidates(self.text, self.cursor_location)
        described = [f"{c.word}: {c.summary}" for c in ChatCommand if c.word in candidates]
        self.border_title = "  ".join(described) + "   (Tab completes)" if described else None

    def take_key(self, key: str, character: str | None) -> None:
        """A key typed for the bar that reached a question as it opened, before the operator
        could have seen it: it does here what it would have done had the bar had it."""
        if key == "enter":
            self._submit()
        elif key in ("ctrl+j", "shift+enter", "alt+enter"):
            self.insert("\n")
        elif key == "backspace":
            self.action_delete_left()
        elif key == "ctrl+u":
            self.action_delete_to_start_of_line()
        elif character is not None and character.isprintable():
            self.insert(character)

    def take_next(self) -> str | None:
        """The oldest prompt in the outbox, taken out of it; None when it is empty."""
        if not self._outbox:
            return None
        text = self._outbox.pop(0)
        self._queue_changed()
        return text

    def take_all_back(self) -> None:
        """Put every queued prompt back into the bar, before what it holds: a stopped turn
        sends nothing it had queued, and loses none of it either."""
        if not self._outbox:
            return
        parts = [*self._outbox, self.text] if self.text else list(self._outbox)
        self._outbox.clear()
        self.value = "\n".join(parts)
        self._queue_changed()

    def give_back(self, text: str) -> None:
        """Put ``text`` back in the bar to be corrected, ahead of anything typed since."""
        self.value = f"{text}\n{self.text}" if self.text else text

    def discard_draft(self) -> bool:
        """Empty the bar (the first Ctrl-C); False when there was nothing to empty."""
        if not self.text:
            return False
        self.clear()
        return True

    def _queue_changed(self) -> None:
        self.post_message(self.QueueChanged(self, self.queued))

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and not self.text and self._outbox:
            # Up in an empty bar edits the last queued prompt, as in Codex.
            self.value = self._outbox.pop()
            self._queue_changed()
        elif not select and self.cursor_location[0] == 0:
            self.action_recall(-1)
        else:
            super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == self.document.line_count - 1:
            self.action_recall(1)
        else:
            super().action_cursor_down(select)

    def remember(self, text: str) -> None:
        self.sent.append(text)
        self._recall_index = len(self.sent)

    def forget(self) -> None:
        self.sent.clear()
        self._recall_index = 0

    def action_recall(self, step: int) -> None:
        if not self.sent:
            return
        if self._recall_index == len(self.sent):
            self._draft = self.text
        self._recall_index = max(0, min(len(self.sent), self._recall_index + step))
        in_range = self._recall_index < len(self.sent)
        self.value = self.sent[self._recall_index] if in_range else self._draft
