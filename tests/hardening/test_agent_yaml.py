"""agent.yaml values no reader can take give one sentence naming the key and the line, and an
expanding document is refused within a budget (issue 16, items 5 and 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.config import ConfigError, Mode, load

CASES = {
    "invalid date as model": ("llm:\n  model: 2024-02-30\n", None),
    "explicit int": ("llm:\n  model: !!int x\n", ("llm.model", "line 2", "!!int")),
    "explicit empty int": ('llm:\n  model: !!int ""\n', ("llm.model", "line 2", "!!int")),
    "explicit float": ("llm:\n  model: !!float x\n", ("llm.model", "line 2", "!!float")),
    "explicit bool": ("llm:\n  model: !!bool maybe\n", ("llm.model", "line 2", "!!bool")),
    "explicit timestamp": ("identity: !!timestamp x\n", ("identity", "line 1", "!!timestamp")),
    "explicit impossible date": ("identity: !!timestamp 2020-13-45\n", ("identity", "line 1")),
    "control character": ("llm:\n  model: a\x01b\n", ("line 2", "control characters")),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_value_no_reader_can_take_is_one_sentence(case: str, tmp_path: Path) -> None:
    text, fragments = CASES[case]
    path = tmp_path / "agent.yaml"
    path.write_text(text)
    if fragments is None:
        assert load(path, Mode.LENIENT).llm.model == "2024-02-30"
        return
    with pytest.raises(ConfigError) as raised:
        load(path, Mode.LENIENT)
    message = str(raised.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


def test_a_document_of_chained_merges_is_refused_within_a_budget(tmp_path: Path) -> None:
    lines = ["a0: &a0 {k: v}"]
    lines += [f"a{i}: &a{i}\n  <<: [*a{i - 1}, *a{i - 1}]\n  k{i}: v" for i in range(1, 300)]
    path = tmp_path / "agent.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match="expands to too many values"):
        load(path, Mode.LENIENT)


BASE = "llm:\n  model: claude\nsystem_prompt: hi\n"


def _config_refusal(text: str, tmp_path: Path) -> str:
    path = tmp_path / "agent.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load(path, Mode.LENIENT)
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_an_integer_of_5000_digits_is_one_sentence_naming_the_key(tmp_path: Path) -> None:
    text = BASE + "expose:\n  agent:\n    mcp:\n      max_concurrent_tools: " + "1" * 5000 + "\n"
    message = _config_refusal(text, tmp_path)
    assert "expose.agent.mcp.max_concurrent_tools" in message
    assert "line 7" in message


def test_an_integer_of_5000_digits_where_text_belongs_reads_as_text(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("llm:\n  model: " + "1" * 5000 + "\nsystem_prompt: hi\n")
    assert load(path, Mode.LENIENT).llm.model == "1" * 5000


@pytest.mark.parametrize(
    "pattern", ["(" * 5000 + ")" * 5000, "a{4294967296}"], ids=["nested", "repeated"]
)
def test_an_extreme_regular_expression_is_one_sentence(pattern: str, tmp_path: Path) -> None:
    text = BASE + f"include:\n  tools:\n    - '{pattern}'\n"
    assert "regular expression" in _config_refusal(text, tmp_path)


@pytest.mark.parametrize(
    "pattern", ["(" * 5000 + ")" * 5000, "a{4294967296}"], ids=["nested", "repeated"]
)
def test_an_extreme_regular_expression_names_its_key_and_line(pattern: str, tmp_path: Path) -> None:
    text = BASE + f"include:\n  tools:\n    - '{pattern}'\n"
    message = _config_refusal(text, tmp_path)
    assert 'line 6: "include.tools[0]" is not a valid regular expression' in message
    assert len(message) < 400


def test_an_agent_yaml_past_the_size_cap_is_refused(tmp_path: Path) -> None:
    text = BASE + "include:\n  tools:\n    - '" + "a" * 2_000_000 + "'\n"
    assert "past the cap of 1,048,576 bytes" in _config_refusal(text, tmp_path)
