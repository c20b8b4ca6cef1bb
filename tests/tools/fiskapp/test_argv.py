from typing import Any

import pytest

from fisk_ai.tools.fiskapp.argv import ArgvError, render_argv
from fisk_ai.tools.fiskapp.model import ArgModel, CommandModel, FlagModel
from fisk_ai.tools.validation import parse_arguments


def cmd(flags: list[dict[str, Any]] = [], args: list[dict[str, Any]] = []) -> CommandModel:  # noqa: B006
    return CommandModel.model_validate({"name": "do", "flags": flags, "args": args})


def render(command: CommandModel, text: str, globals_: list[FlagModel] | None = None) -> list[str]:
    return render_argv(command, globals_ or [], parse_arguments("do", text))


LEVEL_SUBJECT = cmd(
    flags=[{"name": "level"}],
    args=[{"name": "subject"}],
)


def test_the_documented_example() -> None:
    assert render(LEVEL_SUBJECT, '{"level":"info","subject":"hello"}') == [
        "do",
        "--level=info",
        "--",
        "hello",
    ]


def test_unknown_property_is_an_error() -> None:
    with pytest.raises(ArgvError, match=r'^unknown property "colour"$'):
        render(LEVEL_SUBJECT, '{"colour": "red"}')


def test_flags_render_in_declared_order_not_argument_order() -> None:
    command = cmd(flags=[{"name": "b"}, {"name": "a"}])

    assert render(command, '{"a": "1", "b": "2"}') == ["do", "--b=2", "--a=1"]


def test_negatable_boolean_renders_both_ways() -> None:
    command = cmd(flags=[{"name": "color", "boolean": True, "negatable": True}])

    assert render(command, '{"color": true}') == ["do", "--color"]
    assert render(command, '{"color": false}') == ["do", "--no-color"]


def test_un_negatable_boolean_false_renders_nothing() -> None:
    command = cmd(flags=[{"name": "force", "boolean": True}])

    assert render(command, '{"force": true}') == ["do", "--force"]
    assert render(command, '{"force": false}') == ["do"]


def test_un_negatable_boolean_defaulting_true_refuses_false() -> None:
    command = cmd(flags=[{"name": "cache", "boolean": True, "default": ["true"]}])

    with pytest.raises(ArgvError, match=r'^flag "cache": cannot be set to false'):
        render(command, '{"cache": false}')


def test_boolean_flag_needs_a_boolean() -> None:
    command = cmd(flags=[{"name": "force", "boolean": True}])

    with pytest.raises(ArgvError, match='flag "force": expected boolean, got string'):
        render(command, '{"force": "yes"}')


def test_array_flag_repeats() -> None:
    command = cmd(flags=[{"name": "tag", "cumulative": True}])

    assert render(command, '{"tag": ["a", "b"]}') == ["do", "--tag=a", "--tag=b"]


def test_object_flag_renders_sorted_key_value_pairs() -> None:
    command = cmd(flags=[{"name": "label"}])

    assert render(command, '{"label": {"z": "1", "a": 2}}') == ["do", "--label=a=2", "--label=z=1"]


def test_scalars_render_as_fisk_parses_them() -> None:
    command = cmd(flags=[{"name": "s"}, {"name": "n"}, {"name": "b"}, {"name": "z"}])

    assert render(command, '{"s": "x y", "n": 42, "b": true, "z": null}') == [
        "do",
        "--s=x y",
        "--n=42",
        "--b=true",
        "--z=",
    ]


def test_numbers_keep_their_json_spelling() -> None:
    command = cmd(flags=[{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}])

    assert render(command, '{"a": 1.50, "b": 1e3, "c": 12345678901234567890, "d": -0.0}') == [
        "do",
        "--a=1.50",
        "--b=1e3",
        "--c=12345678901234567890",
        "--d=-0.0",
    ]


def test_nested_values_are_refused() -> None:
    command = cmd(flags=[{"name": "tag", "cumulative": True}])

    with pytest.raises(ArgvError, match='flag "tag": unsupported value type array'):
        render(command, '{"tag": [["a"]]}')


def test_positionals_follow_a_double_dash_in_declared_order() -> None:
    command = cmd(args=[{"name": "src"}, {"name": "dst"}])

    assert render(command, '{"dst": "b", "src": "a"}') == ["do", "--", "a", "b"]


def test_no_positional_supplied_means_no_double_dash() -> None:
    command = cmd(flags=[{"name": "x"}], args=[{"name": "src"}])

    assert render(command, '{"x": "1"}') == ["do", "--x=1"]


def test_positionals_stop_at_the_last_supplied_one() -> None:
    command = cmd(args=[{"name": "a"}, {"name": "b"}, {"name": "c"}])

    assert render(command, '{"a": "1"}') == ["do", "--", "1"]


def test_a_gap_is_filled_from_the_default() -> None:
    command = cmd(args=[{"name": "a", "default": ["x"]}, {"name": "b"}])

    assert render(command, '{"b": "2"}') == ["do", "--", "x", "2"]


def test_a_gap_without_default_is_an_error() -> None:
    command = cmd(args=[{"name": "a"}, {"name": "b"}])

    with pytest.raises(ArgvError, match='argument "a" must be set because a later argument is set'):
        render(command, '{"b": "2"}')


def test_array_positional_expands_to_several_tokens() -> None:
    command = cmd(args=[{"name": "first"}, {"name": "rest", "cumulative": True}])

    assert render(command, '{"first": "a", "rest": ["b", "c"]}') == ["do", "--", "a", "b", "c"]


def test_cumulative_argument_must_be_last() -> None:
    command = cmd(args=[{"name": "many", "cumulative": True}, {"name": "one"}])

    with pytest.raises(ArgvError, match='argument "many" is cumulative but is not the last'):
        render(command, '{"one": "x"}')


def test_empty_string_positional_is_kept() -> None:
    command = cmd(args=[{"name": "a"}])

    assert render(command, '{"a": ""}') == ["do", "--", ""]


def test_values_that_look_like_flags_stay_values() -> None:
    command = cmd(flags=[{"name": "name"}], args=[{"name": "a"}])

    assert render(command, '{"name": "--force", "a": "--help"}') == [
        "do",
        "--name=--force",
        "--",
        "--help",
    ]


def test_globals_go_after_the_path_and_before_the_command_flags() -> None:
    command = cmd(flags=[{"name": "force", "boolean": True}], args=[{"name": "stream"}])
    context = FlagModel(name="context")

    argv = render_argv(
        command,
        [context],
        {"stream": "ORDERS", "force": True, "context": "prod"},
        path=["stream", "rm"],
    )

    assert argv == ["stream", "rm", "--context=prod", "--force", "--", "ORDERS"]


def test_a_global_sharing_a_name_with_a_command_flag_is_left_to_the_command() -> None:
    command = cmd(flags=[{"name": "context"}])

    assert render_argv(command, [FlagModel(name="context")], {"context": "x"}) == [
        "do",
        "--context=x",
    ]


def test_arg_models_are_used_as_declared() -> None:
    command = CommandModel(name="cp", args=(ArgModel(name="src"), ArgModel(name="dst")))

    assert render_argv(command, [], {"src": "a", "dst": "b"}) == ["cp", "--", "a", "b"]
