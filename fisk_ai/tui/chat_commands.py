"""The chat bar's commands: the one table the run screen dispatches on, the help screen lists
and Tab completes from."""

from __future__ import annotations

import enum
import os

__all__ = ["ESCAPED_SLASH", "ChatCommand", "command_candidates", "complete_command"]

ESCAPED_SLASH = "//"
"""A prompt starting with this is sent with one slash, not read as a command."""


class ChatCommand(enum.Enum):
    """A command typed in the chat bar: the word that names it and what it does, in one line."""

    CLEAR = ("/clear", "drop the conversation and start a new one; the screen is kept")
    HELP = ("/help", "show the keys and the chat commands")
    EXIT = ("/exit", "leave, like Ctrl-D")

    def __init__(self, word: str, summary: str) -> None:
        self.word = word
        self.summary = summary

    @classmethod
    def named(cls, word: str) -> ChatCommand | None:
        """The command ``word`` names (``/clear``); None for any other word."""
        return next((command for command in cls if command.word == word), None)


def _command_prefix(text: str, cursor: tuple[int, int]) -> str | None:
    """The ``/word`` the cursor ends, when it is the first word of the bar; None otherwise."""
    row, column = cursor
    first_line = text.split("\n", 1)[0]
    if row != 0 or not first_line.startswith("/") or first_line.startswith(ESCAPED_SLASH):
        return None
    typed = first_line[:column]
    if any(character.isspace() for character in typed):
        return None
    if column < len(first_line) and not first_line[column].isspace():
        return None
    return typed


def command_candidates(text: str, cursor: tuple[int, int]) -> list[str]:
    """The commands the ``/word`` before ``cursor`` (row, column, as the chat bar's
    ``cursor_location``) may be the start of, in table order: ``"/c"`` gives ``["/clear"]``.
    Empty unless the cursor ends a first word that starts with one slash."""
    prefix = _command_prefix(text, cursor)
    if prefix is None:
        return []
    return [command.word for command in ChatCommand if command.word.startswith(prefix)]


def complete_command(text: str, cursor: tuple[int, int]) -> tuple[str, tuple[int, int]] | None:
    """What Tab makes of the bar: the ``/word`` before ``cursor`` extended as far as every
    candidate agrees, and a space after it when only one is left, with where the cursor goes.
    None when there is nothing to add."""
    candidates = command_candidates(text, cursor)
    if not candidates:
        return None
    _, column = cursor
    rest = text[column:]
    if len(candidates) == 1:
        head = candidates[0] if rest.startswith(" ") else f"{candidates[0]} "
        new_column = len(candidates[0]) + 1
    else:
        head = os.path.commonprefix(candidates)  # noqa: RUF071 - command words, not paths
        new_column = len(head)
    new_text = head + rest
    if new_text == text and new_column == column:
        return None
    return new_text, (0, new_column)
