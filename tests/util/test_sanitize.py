from fisk_ai.util.sanitize import single_line, strip_control


def test_escape_sequences_are_removed() -> None:
    assert strip_control("\x1b[31mred\x1b[0m \x1b]2;title\x07ok") == "red ok"


def test_newlines_and_tabs_survive_strip_control() -> None:
    assert strip_control("a\n\tb\x07c") == "a\n\tb c"


def test_single_line_collapses_and_caps() -> None:
    assert single_line("one\n two\x1b[2J   three", limit=9) == "one two t..."


def test_single_line_leaves_short_text_alone() -> None:
    assert single_line("  say hello  ") == "say hello"


def test_an_unterminated_osc_hides_nothing_past_its_introducer() -> None:
    assert strip_control("visible\n\x1b]\nHIDDEN line\nmore") == "visible\n\nHIDDEN line\nmore"


def test_an_osc_terminated_on_a_later_line_hides_nothing() -> None:
    assert strip_control("a\x1b]0;x\nHIDDEN\x07b") == "a0;x\nHIDDEN b"


def test_an_unterminated_dcs_or_apc_hides_nothing_past_its_introducer() -> None:
    assert strip_control("a\x1bPpayload\nrest") == "apayload\nrest"
    assert strip_control("a\x1b_payload") == "apayload"


def test_a_terminated_apc_is_removed_whole() -> None:
    assert strip_control("a\x1b_gone\x1b\\b") == "ab"


def test_bidi_controls_are_removed() -> None:
    text = "file\u202etxt.exe \u2066iso\u2069 \u202aemb\u202c"
    assert strip_control(text) == "filetxt.exe iso emb"
    assert single_line(text) == "filetxt.exe iso emb"


def test_a_lone_surrogate_becomes_a_replacement_character() -> None:
    assert strip_control("bad\ud800") == "bad\ufffd"
    assert single_line("bad\udfff x").encode() == "bad\ufffd x".encode()


def test_single_line_reads_every_character_as_the_full_sanitiser_does() -> None:
    # Text with nothing to clean takes a shortcut; each character, alone and between others,
    # comes out as the escape-stripping, control-collapsing reading of it would have it.
    for code in range(0x10000):
        for text in (chr(code), f"a{chr(code)}b", f"a {chr(code)}  b "):
            assert single_line(text) == " ".join(strip_control(text).split()), hex(code)
