from __future__ import annotations

import click
import pytest

from fisk_ai.tools.introspect.hoist import hoist_group_options


@pytest.fixture
def application() -> click.Group:
    remove = click.Command(
        "rm",
        params=[
            click.Option(["--force"], is_flag=True),
            click.Option(["--server"]),
            click.Argument(["stream"]),
        ],
    )
    streams = click.Group("stream", params=[click.Option(["--server"])], commands=[remove])
    events = click.Group("events", params=[click.Option(["--since"])], commands=[remove])
    return click.Group(
        "app",
        params=[
            click.Option(["-c", "--context"]),
            click.Option(["--color/--no-color"]),
            click.Option(["--trace"], is_flag=True),
        ],
        commands=[streams, events],
    )


def test_root_option_with_inline_value_moves_to_the_front(application: click.Group) -> None:
    hoisted = hoist_group_options(
        application, ["stream", "rm", "--context=prod", "--force", "--", "ORDERS"]
    )
    assert hoisted == ["--context=prod", "stream", "rm", "--force", "--", "ORDERS"]


def test_root_option_with_separate_value_moves_with_its_value(application: click.Group) -> None:
    hoisted = hoist_group_options(application, ["stream", "rm", "--context", "rm", "--force"])
    assert hoisted == ["--context", "rm", "stream", "rm", "--force"]


def test_root_switches_move_in_both_spellings(application: click.Group) -> None:
    hoisted = hoist_group_options(application, ["stream", "rm", "--no-color", "--trace"])
    assert hoisted == ["--no-color", "--trace", "stream", "rm"]


def test_short_root_option_with_separate_value_moves(application: click.Group) -> None:
    hoisted = hoist_group_options(application, ["stream", "rm", "-c", "prod"])
    assert hoisted == ["-c", "prod", "stream", "rm"]


def test_short_root_option_with_glued_value_moves(application: click.Group) -> None:
    assert hoist_group_options(application, ["stream", "rm", "-cprod"]) == [
        "-cprod",
        "stream",
        "rm",
    ]


def test_nothing_after_the_separator_is_touched(application: click.Group) -> None:
    argv = ["stream", "rm", "--", "--context=prod", "stream"]
    assert hoist_group_options(application, argv) == argv


def test_leaf_option_of_the_same_name_stays_with_the_leaf(application: click.Group) -> None:
    argv = ["stream", "rm", "--server=a", "--", "ORDERS"]
    assert hoist_group_options(application, argv) == argv


def test_intermediate_group_option_moves_behind_its_group(application: click.Group) -> None:
    hoisted = hoist_group_options(application, ["events", "rm", "--since=1h", "--", "ORDERS"])
    assert hoisted == ["events", "--since=1h", "rm", "--", "ORDERS"]


def test_argv_already_in_click_order_is_unchanged(application: click.Group) -> None:
    argv = ["--context", "prod", "stream", "rm", "--force", "ORDERS"]
    assert hoist_group_options(application, argv) == argv


def test_unknown_option_stays_where_it_was(application: click.Group) -> None:
    argv = ["stream", "rm", "--bogus", "--", "ORDERS"]
    assert hoist_group_options(application, argv) == argv
