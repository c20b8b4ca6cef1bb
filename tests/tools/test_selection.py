from dataclasses import dataclass

import pytest

from fisk_ai.tools.selection import ToolFilter, ToolSelectionError, is_selected, select_tools


@dataclass(frozen=True)
class Candidate:
    name: str
    tags: tuple[str, ...] = ()


def test_deny_removes_a_tool_even_when_include_names_it() -> None:
    include = ToolFilter(tools=("^secrets",))

    assert not is_selected("secrets", ["ai:deny"], include=include)


def test_empty_include_keeps_everything_not_denied() -> None:
    assert is_selected("say", [], include=ToolFilter())


def test_include_keeps_only_matching_tools() -> None:
    include = ToolFilter(tools=("^cow",))

    assert is_selected("cow_say", [], include=include)
    assert not is_selected("say", [], include=include)


def test_patterns_match_anywhere_in_the_name() -> None:
    assert ToolFilter(tools=("say",)).matches("cow_say", [])


def test_exclude_applies_after_include() -> None:
    include = ToolFilter(tools=("^cow",))
    exclude = ToolFilter(tools=("^cow_think",))

    assert is_selected("cow_say", [], include=include, exclude=exclude)
    assert not is_selected("cow_think", [], include=include, exclude=exclude)


def test_tags_match_exactly() -> None:
    exclude = ToolFilter(tags=("scope:system",))

    assert not is_selected("reboot", ["scope:system"], exclude=exclude)
    assert is_selected("ls", ["scope:system-ish"], exclude=exclude)


def test_empty_tag_matches_untagged_tools_only() -> None:
    include = ToolFilter(tags=("",))

    assert is_selected("plain", [], include=include)
    assert not is_selected("tagged", ["impact:rw"], include=include)


def test_select_tools_keeps_order() -> None:
    candidates = [Candidate("b"), Candidate("secret", ("ai:deny",)), Candidate("a")]

    assert [c.name for c in select_tools(candidates)] == ["b", "a"]


def test_invalid_pattern_names_the_pattern() -> None:
    with pytest.raises(ToolSelectionError, match=r"\(unclosed"):
        ToolFilter(tools=("(unclosed",)).matches("x", [])
