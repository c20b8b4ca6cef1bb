from collections.abc import Sequence
from dataclasses import dataclass

from fisk_ai.tools.gating import confirm_trigger, unmatched_confirm_tags


@dataclass(frozen=True)
class Tagged:
    tags: tuple[str, ...]

    def confirm_trigger(self, confirm_tags: Sequence[str]) -> str | None:
        return confirm_trigger(self.tags, confirm_tags)


def test_ai_confirm_wins_over_configured_tags() -> None:
    assert confirm_trigger(["impact:rw", "ai:confirm"], ["impact:rw"]) == "ai:confirm"


def test_first_of_the_tools_own_tags_in_confirm_tags_is_the_trigger() -> None:
    trigger = confirm_trigger(["scope:db", "impact:rw"], ["impact:rw", "scope:db"])

    assert trigger == "scope:db"


def test_ungated_tool_has_no_trigger() -> None:
    assert confirm_trigger(["impact:ro"], ["impact:rw"]) is None
    assert confirm_trigger([], []) is None


def test_confirm_tags_match_exactly_not_as_patterns() -> None:
    assert confirm_trigger(["impact:rw"], ["impact:.*"]) is None


def test_unmatched_confirm_tags_lists_tags_no_tool_carries() -> None:
    tools = [Tagged(("impact:rw",)), Tagged(("ai:confirm",))]

    assert unmatched_confirm_tags(["impact:rw", "impact:rx", "ai:destructive"], tools) == [
        "impact:rx",
        "ai:destructive",
    ]
