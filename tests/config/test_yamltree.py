from __future__ import annotations

import pytest

from fisk_ai.config import ConfigError
from fisk_ai.config.yamltree import describe_path, read_yaml


def test_lines_are_recorded_for_keys_and_items() -> None:
    document = read_yaml("a:\n  b:\n    - x\n    - y\n", source="t.yaml")
    assert document.lines[("a",)] == 1
    assert document.lines[("a", "b")] == 2
    assert document.lines[("a", "b", 1)] == 4


def test_keys_are_kept_as_written() -> None:
    document = read_yaml("on: 1\n2: x\n", source="t.yaml")
    assert document.data == {"on": 1, "2": "x"}


def test_a_duplicate_key_names_both_lines() -> None:
    with pytest.raises(
        ConfigError, match=r'^t.yaml line 3: duplicate key "a.b" \(first written on line 2\)$'
    ):
        read_yaml("a:\n  b: 1\n  b: 2\n", source="t.yaml")


def test_aliases_expand() -> None:
    document = read_yaml("x: &v [1, 2]\ny: *v\n", source="t.yaml")
    assert document.data == {"x": [1, 2], "y": [1, 2]}


def test_merge_keys_fill_in_without_overriding() -> None:
    document = read_yaml("base: &b {p: 1, q: 2}\nuse:\n  <<: *b\n  q: 3\n", source="t.yaml")
    assert document.data["use"] == {"p": 1, "q": 3}
    assert document.lines[("use", "q")] == 4


def test_a_self_referencing_alias_is_refused() -> None:
    with pytest.raises(ConfigError, match="refers to itself"):
        read_yaml("a: &a [*a]\n", source="t.yaml")


def test_an_unknown_tag_is_refused_with_its_line() -> None:
    with pytest.raises(ConfigError, match=r"^t.yaml line 2: "):
        read_yaml("a: 1\nb: !Ref x\n", source="t.yaml")


def test_an_empty_document_has_no_data() -> None:
    assert read_yaml("", source="t.yaml").data is None


def test_two_documents_are_refused() -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        read_yaml("a: 1\n---\nb: 2\n", source="t.yaml")


def test_describe_path_reads_like_the_file() -> None:
    assert describe_path(("include", "tools", 2)) == "include.tools[2]"
    assert describe_path(("mcp_clients", 0, "env", "HOME")) == "mcp_clients[0].env.HOME"


def test_plain_scalars_resolve_as_yaml_1_2_does() -> None:
    document = read_yaml(
        "a: off\nb: yes\nc: TRUE\nd: 0x1F\ne: 017\nf: 1_000\ng: 2026-01-01\nh: 1e5\ni: ~\n",
        source="t.yaml",
    )
    assert document.data == {
        "a": "off",
        "b": "yes",
        "c": True,
        "d": 31,
        "e": 15,
        "f": 1000,
        "g": "2026-01-01",
        "h": "1e5",
        "i": None,
    }


def test_the_text_of_a_resolved_scalar_is_kept() -> None:
    document = read_yaml("a: 0x1F\nb: [1.10, 'x']\n", source="t.yaml")
    assert document.texts == {("a",): "0x1F", ("b", 0): "1.10"}


def test_a_merge_keeps_the_text_of_the_key_written_in_the_mapping() -> None:
    document = read_yaml("base: &b {p: 1}\nuse:\n  <<: *b\n  p: 0x2\n", source="t.yaml")
    assert document.data["use"] == {"p": 2}
    assert document.texts[("use", "p")] == "0x2"
