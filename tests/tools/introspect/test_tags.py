from __future__ import annotations

import click
import pytest

from fisk_ai.tools.introspect import application_model, fisk_tags


def tags_in_model(command: click.Command) -> list[str]:
    tags: list[str] = application_model(click.Group("app", commands=[command]))["commands"][0][
        "tags"
    ]
    return tags


def test_tags_above_the_command_decorator_are_read() -> None:
    @fisk_tags("ai:read_only")
    @click.command()
    def status() -> None: ...

    assert tags_in_model(status) == ["ai:read_only"]


def test_tags_below_the_command_decorator_are_read() -> None:
    @click.command()
    @fisk_tags("ai:read_only")
    def status() -> None: ...

    assert tags_in_model(status) == ["ai:read_only"]


def test_tags_below_pass_context_are_read() -> None:
    @click.command()
    @click.pass_context
    @fisk_tags("ai:read_only")
    def status(ctx: click.Context) -> None: ...

    assert tags_in_model(status) == ["ai:read_only"]


def test_stacked_tags_keep_reading_order_on_either_side() -> None:
    @fisk_tags("ai:confirm")
    @fisk_tags("ai:destructive")
    @click.command()
    @fisk_tags("impact:rw")
    def restart() -> None: ...

    assert tags_in_model(restart) == ["ai:confirm", "ai:destructive", "impact:rw"]


def test_repeated_tags_appear_once() -> None:
    @fisk_tags("ai:confirm")
    @click.command()
    @fisk_tags("ai:confirm", "impact:rw")
    def restart() -> None: ...

    assert tags_in_model(restart) == ["ai:confirm", "impact:rw"]


def test_group_tags_are_read() -> None:
    @fisk_tags("scope:system")
    @click.group()
    def admin() -> None: ...

    assert tags_in_model(admin) == ["scope:system"]


@pytest.mark.parametrize("tag", ["", "impact rw"])
def test_empty_or_spaced_tag_is_refused(tag: str) -> None:
    with pytest.raises(ValueError, match="fisk tag"):
        fisk_tags(tag)
