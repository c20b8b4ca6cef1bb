from fisk_ai.util.redact import redact_values


def test_each_secret_value_is_replaced_wherever_it_appears() -> None:
    text = "key sk-secret-123 sent twice: sk-secret-123"
    assert redact_values(text, ["sk-secret-123"]) == "key REDACTED sent twice: REDACTED"


def test_a_value_holding_another_is_replaced_whole() -> None:
    text = "token abcdefgh-ijklmnop"
    assert redact_values(text, ["abcdefgh", "abcdefgh-ijklmnop"]) == "token REDACTED"


def test_a_value_shorter_than_eight_characters_is_left_alone() -> None:
    assert redact_values("team blue, id 7", ["blue", "7"]) == "team blue, id 7"
