"""The chat commands' one table: what `/` completes to, and the help listing every command."""

from __future__ import annotations

from fisk_ai.screens.help import help_text
from fisk_ai.tui.chat_commands import ChatCommand, command_candidates, complete_command


def test_a_prefix_gives_the_commands_it_starts() -> None:
    assert command_candidates("/c", (0, 2)) == ["/clear"]


def test_a_lone_slash_gives_every_command() -> None:
    assert command_candidates("/", (0, 1)) == ["/clear", "/help", "/exit"]


def test_a_whole_command_is_its_own_candidate() -> None:
    assert command_candidates("/exit", (0, 5)) == ["/exit"]


def test_a_prefix_of_no_command_gives_none() -> None:
    assert command_candidates("/x", (0, 2)) == []


def test_text_without_a_leading_slash_gives_none() -> None:
    assert command_candidates("see /c", (0, 6)) == []


def test_an_escaped_slash_gives_none() -> None:
    assert command_candidates("//c", (0, 3)) == []


def test_the_words_after_a_command_give_none() -> None:
    assert command_candidates("/clear /c", (0, 9)) == []


def test_a_cursor_inside_the_word_gives_none() -> None:
    assert command_candidates("/clear", (0, 3)) == []


def test_a_cursor_on_a_later_line_gives_none() -> None:
    assert command_candidates("/c\n/c", (1, 2)) == []


def test_the_candidates_are_of_the_word_before_the_cursor() -> None:
    assert command_candidates("/h then more", (0, 2)) == ["/help"]


def test_tab_on_the_one_candidate_completes_it_with_a_space() -> None:
    assert complete_command("/cl", (0, 3)) == ("/clear ", (0, 7))


def test_tab_keeps_what_follows_the_word() -> None:
    assert complete_command("/cl start over", (0, 3)) == ("/clear start over", (0, 7))


def test_tab_on_a_complete_command_adds_the_space() -> None:
    assert complete_command("/exit", (0, 5)) == ("/exit ", (0, 6))


def test_tab_with_nothing_to_add_changes_nothing() -> None:
    assert complete_command("/", (0, 1)) is None
    assert complete_command("/zzz", (0, 4)) is None


def test_a_command_is_found_by_its_word() -> None:
    assert ChatCommand.named("/clear") is ChatCommand.CLEAR
    assert ChatCommand.named("/clea") is None


def test_the_help_lists_every_command_with_what_it_does() -> None:
    shown = help_text()
    for command in ChatCommand:
        assert any(
            line.split(maxsplit=1) == [command.word, command.summary] for line in shown.splitlines()
        ), command.word
