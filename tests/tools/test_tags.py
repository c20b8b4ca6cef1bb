from fisk_ai.tools.tags import Behavior, inspect_tags


def test_plain_behaviour_tags_are_reported_as_given() -> None:
    report = inspect_tags("ls", ["ai:read_only", "ai:idempotent"])

    assert report.behavior == Behavior(read_only=True, idempotent=True)
    assert report.warnings == ()


def test_read_only_with_destructive_loses_read_only_and_warns() -> None:
    report = inspect_tags("rm", ["ai:read_only", "ai:destructive"])

    assert report.behavior == Behavior(destructive=True)
    assert len(report.warnings) == 1
    assert '"rm"' in report.warnings[0]


def test_read_only_with_additive_loses_read_only() -> None:
    report = inspect_tags("add", ["ai:additive", "ai:read_only"])

    assert report.behavior == Behavior(additive=True)
    assert len(report.warnings) == 1


def test_destructive_beats_additive() -> None:
    report = inspect_tags("sync", ["ai:additive", "ai:destructive"])

    assert report.behavior == Behavior(destructive=True)
    assert len(report.warnings) == 1


def test_resolution_does_not_depend_on_tag_order() -> None:
    tags = ["ai:read_only", "ai:additive", "ai:destructive"]

    assert inspect_tags("x", tags) == inspect_tags("x", list(reversed(tags)))


def test_unknown_ai_tag_is_a_warning_naming_the_tool_and_tag() -> None:
    report = inspect_tags("ls", ["ai:readonly", "impact:ro"])

    assert report.behavior == Behavior()
    assert report.warnings == ('tool "ls" has the unknown tag "ai:readonly", which has no effect',)


def test_reserved_control_tags_are_known() -> None:
    assert inspect_tags("x", ["ai:deny", "ai:no_defer", "ai:confirm"]).warnings == ()
