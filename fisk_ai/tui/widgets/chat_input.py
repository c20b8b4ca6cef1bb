"""The chat bar of the run screen."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.reactive import var
from textual.widgets import TextArea

# tmux and most terminals send Alt-Enter as a plain Enter; Ctrl-J reaches the app everywhere.
CHAT_PLACEHOLDER = "Ready for a follow-up. Enter sends, Ctrl-J a newline, /help for commands"

RUNNING_PLACEHOLDER = "Type ahead: Enter queues it, sent when the turn ends"
QUEUED_TITLE = "queued: sent when the turn ends; keep editing, or empty it to cancel"

# Keys that put a line break in the chat bar. A terminal without the kitty keyboard protocol
# sends Alt-Enter as a plain Enter, so Ctrl-J is there as well.
NEWLINE_KEYS = frozenset({"alt+enter", "ctrl+j"})


class ChatInput(TextArea):
    """The chat bar: Enter sends, Alt-Enter (or Ctrl-J) starts a new line, and Up on the first
    line or Down on the last recall this conversation's earlier prompts."""

    class Submitted(Message):
        """Enter in the chat bar; ``value`` is the whole text, line breaks included."""

        def __init__(self, chat: ChatInput, value: str) -> None:
            super().__init__()
            self.chat = chat
            self.value = value

        @property
        def control(self) -> ChatInput:
            return self.chat

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            id=id, placeholder=CHAT_PLACEHOLDER, soft_wrap=True, highlight_cursor_line=False
        )
        self.sent: list[str] = []
        self._recall_index = 0

    running: var[bool] = var(False)
    """A turn is in flight: Enter queues rather than sends."""
    queued: var[bool] = var(False)
    """The text in the bar goes when the turn ends."""

    def watch_running(self, running: bool) -> None:
        self.placeholder = RUNNING_PLACEHOLDER if running else CHAT_PLACEHOLDER

    def watch_queued(self, queued: bool) -> None:
        self.set_class(queued, "-queued")
        self.border_title = QUEUED_TITLE if queued else None

    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.text))
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == 0:
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
        self._recall_index = max(0, min(len(self.sent), self._recall_index + step))
        in_range = self._recall_index < len(self.sent)
        self.value = self.sent[self._recall_index] if in_range else ""
