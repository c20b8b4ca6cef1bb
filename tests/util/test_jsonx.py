import pytest

from fisk_ai.util.jsonx import MAX_DEPTH, JsonError, Surrogates, parse


def test_a_plain_document_reads() -> None:
    assert parse(b'{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}


def test_nesting_past_the_bound_is_one_clear_error() -> None:
    with pytest.raises(JsonError, match="nests deeper than"):
        parse("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


def test_nesting_past_the_recursion_limit_is_the_same_error() -> None:
    with pytest.raises(JsonError, match="nests deeper than"):
        parse(b'{"a":' * 100_000 + b"1" + b"}" * 100_000)


def test_nesting_at_the_bound_reads() -> None:
    assert parse("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    assert parse('["' + "[" * 500 + '"]') == ["[" * 500]


def test_bytes_that_are_not_utf8_are_one_clear_error() -> None:
    with pytest.raises(JsonError, match=r"not valid UTF-8 text \(byte 0xff at offset 2\)"):
        parse(b'"a\xff"')


def test_malformed_json_is_one_clear_error() -> None:
    with pytest.raises(JsonError, match="is not valid JSON"):
        parse("{")


def test_non_finite_constants_are_refused() -> None:
    with pytest.raises(JsonError, match="NaN is not a JSON number"):
        parse("[NaN]")


def test_a_lone_surrogate_is_replaced_by_default() -> None:
    assert parse(r'{"\ud800k": ["\udfff", "\ud83d\ude00"]}') == {
        "\ufffdk": ["\ufffd", "\U0001f600"]
    }


def test_a_lone_surrogate_is_kept_when_asked() -> None:
    assert parse(r'"\ud800"', surrogates=Surrogates.KEEP) == "\ud800"


def test_a_lone_surrogate_is_refused_when_asked() -> None:
    with pytest.raises(JsonError, match="lone surrogate"):
        parse(r'["\ud800"]', surrogates=Surrogates.REFUSE)


def test_a_surrogate_pair_is_not_refused() -> None:
    assert parse(r'"\ud83d\ude00"', surrogates=Surrogates.REFUSE) == "\U0001f600"


def test_the_error_is_a_value_error_for_existing_handlers() -> None:
    assert issubclass(JsonError, ValueError)


def test_a_number_too_large_for_a_float_is_refused() -> None:
    with pytest.raises(JsonError, match="holds the number 1e999, which is out of range"):
        parse('{"n": 1e999}')


def test_an_integer_past_the_digit_cap_is_refused() -> None:
    with pytest.raises(JsonError, match="an integer of 5000 digits"):
        parse('{"n": ' + "9" * 5000 + "}")
