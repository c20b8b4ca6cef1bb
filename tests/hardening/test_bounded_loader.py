"""The one bounded loader refuses what passes a cap in one sentence naming the data and the cap
(issue 25, item 6)."""

from __future__ import annotations

import pytest

from fisk_ai.errors import BoundedInputError, FiskError
from fisk_ai.util.bounded import load_yaml, loads_json

WHAT = "the test document"

BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
)


def _refusal(load: object, data: str | bytes, **caps: int) -> str:
    assert callable(load)
    with pytest.raises(BoundedInputError) as raised:
        load(data, what=WHAT, **caps)
    message = str(raised.value)
    assert message.startswith(WHAT + " ")
    assert "\n" not in message
    assert isinstance(raised.value, FiskError)
    return message


def test_a_json_integer_of_5000_digits_is_refused_naming_the_cap() -> None:
    assert "100" in _refusal(loads_json, '{"count": ' + "7" * 5000 + "}")


def test_a_json_number_past_a_float_is_refused() -> None:
    assert "1e999" in _refusal(loads_json, '{"input_tokens": 1e999}')


def test_deep_json_is_refused_at_the_depth_cap() -> None:
    assert "deeper than 100 levels" in _refusal(loads_json, "[" * 500 + "]" * 500)


def test_json_far_past_the_recursion_limit_is_refused() -> None:
    assert "deeper than" in _refusal(loads_json, "[" * 100_000 + "]" * 100_000)


def test_json_larger_than_the_size_cap_is_refused() -> None:
    assert "past the cap of 1,000 bytes" in _refusal(
        loads_json, '"' + "x" * 2000 + '"', max_bytes=1000
    )


def test_json_that_is_not_utf8_is_refused() -> None:
    assert "UTF-8" in _refusal(loads_json, b'{"a": "\xff"}')


def test_ordinary_json_is_read() -> None:
    assert loads_json(b'{"a": [1, 2.5, "x", null]}', what=WHAT) == {"a": [1, 2.5, "x", None]}


def test_a_yaml_alias_bomb_is_refused_without_expanding() -> None:
    assert len(BILLION_LAUGHS) < 500
    assert "expands to too many values" in _refusal(load_yaml, BILLION_LAUGHS)


def test_chained_yaml_merges_are_refused() -> None:
    lines = ["a0: &a0 {k: v}"]
    lines += [f"a{i}: &a{i}\n  <<: [*a{i - 1}, *a{i - 1}]\n  k{i}: v" for i in range(1, 300)]
    assert "too many values" in _refusal(load_yaml, "\n".join(lines))


def test_a_yaml_alias_to_itself_is_refused() -> None:
    assert "refers to itself" in _refusal(load_yaml, "a: &a [*a]\n")


def test_a_yaml_integer_of_5000_digits_is_refused() -> None:
    assert "5000 digits" in _refusal(load_yaml, "a: " + "1" * 5000 + "\n")


def test_a_yaml_float_past_range_is_refused_but_inf_is_read() -> None:
    assert "out of range" in _refusal(load_yaml, "a: 1.0e+999\n")
    assert load_yaml("a: .inf\n", what=WHAT) == {"a": float("inf")}


def test_yaml_nested_past_the_depth_cap_is_refused() -> None:
    assert "deeper than 100 levels" in _refusal(load_yaml, "[" * 150 + "]" * 150)


def test_a_yaml_python_tag_is_refused() -> None:
    assert "not valid YAML" in _refusal(load_yaml, "a: !!python/object/apply:os.system [ls]\n")


def test_ordinary_yaml_with_shared_aliases_is_read() -> None:
    assert load_yaml("a: &a {k: v}\nb: *a\n", what=WHAT) == {"a": {"k": "v"}, "b": {"k": "v"}}
