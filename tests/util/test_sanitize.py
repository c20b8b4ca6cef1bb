from fisk_ai.util.sanitize import single_line, strip_control


def test_escape_sequences_are_removed() -> None:
    assert strip_control("\x1b[31mred\x1b[0m \x1b]2;title\x07ok") == "red ok"


def test_newlines_and_tabs_survive_strip_control() -> None:
    assert strip_control("a\n\tb\x07c") == "a\n\tb c"


def test_single_line_collapses_and_caps() -> None:
    assert single_line("one\n two\x1b[2J   three", limit=9) == "one two t..."


def test_single_line_leaves_short_text_alone() -> None:
    assert single_line("  say hello  ") == "say hello"
