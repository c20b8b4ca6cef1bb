from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import Any

import click
import jsonschema
import pytest

from fisk_ai.tools.introspect import application_model, fisk_tags


def nothing(**_: Any) -> None:
    return None


def leaf_entry(*params: click.Parameter, help_text: str | None = None) -> dict[str, Any]:
    command = click.Command("leaf", params=list(params), help=help_text, callback=nothing)
    model = application_model(click.Group("app", commands=[command]))
    entry: dict[str, Any] = model["commands"][0]
    return entry


def schema_of(*params: click.Parameter) -> dict[str, Any]:
    schema: dict[str, Any] = leaf_entry(*params)["restricted_schema"]
    return schema


def property_of(param: click.Parameter) -> dict[str, Any]:
    properties: dict[str, Any] = schema_of(param)["properties"]
    return next(iter(properties.values()))


def flag_of(option: click.Option) -> dict[str, Any]:
    flag: dict[str, Any] = leaf_entry(option)["flags"][0]
    return flag


def every_command(commands: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for command in commands:
        yield command
        yield from every_command(command.get("commands", []))


def test_integer_option_becomes_an_integer_property() -> None:
    assert property_of(click.Option(["--count"], type=int, help="How many")) == {
        "type": "integer",
        "description": "How many",
    }


def test_int_range_carries_its_bounds() -> None:
    schema = property_of(click.Option(["--level"], type=click.IntRange(1, 5)))
    assert schema == {"type": "integer", "minimum": 1, "maximum": 5}


def test_half_bounded_range_carries_only_its_bound() -> None:
    assert property_of(click.Option(["--retries"], type=click.IntRange(min=0))) == {
        "type": "integer",
        "minimum": 0,
    }


def test_open_float_range_uses_exclusive_bounds() -> None:
    schema = property_of(click.Option(["--share"], type=click.FloatRange(0, 1, max_open=True)))
    assert schema == {"type": "number", "minimum": 0, "exclusiveMaximum": 1}


def test_float_option_becomes_a_number() -> None:
    assert property_of(click.Option(["--ratio"], type=float)) == {"type": "number"}


def test_choice_becomes_a_string_enum() -> None:
    schema = property_of(click.Option(["--color"], type=click.Choice(["red", "blue"])))
    assert schema == {"type": "string", "enum": ["red", "blue"]}


def test_enum_choice_is_listed_by_member_name() -> None:
    class Color(enum.Enum):
        RED = "r"
        BLUE = "b"

    option = click.Option(["--color"], type=click.Choice(Color), default=Color.RED)
    assert property_of(option) == {"type": "string", "enum": ["RED", "BLUE"], "default": "RED"}


def test_strings_paths_and_other_types_become_strings() -> None:
    schema = schema_of(
        click.Option(["--name"]),
        click.Option(["--where"], type=click.Path()),
        click.Option(["--id"], type=click.UUID),
    )
    assert [prop["type"] for prop in schema["properties"].values()] == ["string"] * 3


def test_value_taking_bool_option_is_a_boolean_but_not_a_switch() -> None:
    option = click.Option(["--enabled"], type=bool)
    assert property_of(option) == {"type": "boolean"}
    assert flag_of(option)["boolean"] is False


def test_multiple_option_becomes_an_array_and_is_cumulative() -> None:
    option = click.Option(["--label"], multiple=True, type=int)
    assert property_of(option) == {"type": "array", "items": {"type": "integer"}}
    assert flag_of(option)["cumulative"] is True


def test_variadic_argument_becomes_an_array_and_is_cumulative() -> None:
    entry = leaf_entry(click.Argument(["files"], nargs=-1))
    assert entry["restricted_schema"]["properties"]["files"] == {
        "type": "array",
        "items": {"type": "string"},
    }
    assert entry["args"] == [{"name": "files", "help": "", "cumulative": True}]


def test_required_variadic_argument_needs_at_least_one_item() -> None:
    schema = property_of(click.Argument(["files"], nargs=-1, required=True))
    assert schema["minItems"] == 1


def test_fixed_count_argument_becomes_an_array_of_that_length() -> None:
    schema = property_of(click.Argument(["point"], nargs=2, type=int))
    assert schema == {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}


def test_required_lists_only_genuinely_required_parameters() -> None:
    schema = schema_of(
        click.Option(["--name"], required=True),
        click.Option(["--note"]),
        click.Argument(["target"]),
        click.Argument(["mode"], default="fast"),
        click.Argument(["rest"], nargs=-1),
    )
    assert schema["required"] == ["name", "target"]


def test_schema_without_required_parameters_has_no_required_key() -> None:
    assert "required" not in schema_of(click.Option(["--note"]))


def test_prompted_option_without_default_is_required() -> None:
    option = click.Option(["--password"], prompt=True)
    assert schema_of(option)["required"] == ["password"]
    assert flag_of(option)["required"] is True


def test_default_is_carried_in_schema_and_model() -> None:
    option = click.Option(["--count"], type=int, default=3)
    assert property_of(option)["default"] == 3
    assert flag_of(option)["default"] == ["3"]


def test_multiple_option_default_is_carried_as_a_list() -> None:
    option = click.Option(["--label"], multiple=True, default=["a", "b"])
    assert property_of(option)["default"] == ["a", "b"]
    assert flag_of(option)["default"] == ["a", "b"]


def test_default_of_another_json_type_stays_out_of_the_schema() -> None:
    option = click.Option(["--count"], type=int, default="5")
    assert "default" not in property_of(option)
    assert flag_of(option)["default"] == ["5"]


def test_computed_default_is_not_carried() -> None:
    option = click.Option(["--count"], type=int, default=lambda: 7)
    assert "default" not in property_of(option)
    assert "default" not in flag_of(option)


def test_hidden_option_is_flagged_and_left_out_of_the_schema() -> None:
    entry = leaf_entry(click.Option(["--secret"], hidden=True), click.Option(["--name"]))
    assert list(entry["restricted_schema"]["properties"]) == ["name"]
    assert entry["flags"][0]["hidden"] is True


def test_slash_flag_is_boolean_and_negatable() -> None:
    option = click.Option(["--wait/--no-wait"], help="Wait for it")
    assert flag_of(option) == {
        "name": "wait",
        "help": "Wait for it",
        "boolean": True,
        "negatable": True,
        "cumulative": False,
    }
    assert property_of(option) == {"type": "boolean", "description": "Wait for it"}


def test_plain_flag_is_boolean_and_not_negatable() -> None:
    option = click.Option(["--force"], is_flag=True)
    assert flag_of(option) == {"name": "force", "help": "", "boolean": True, "cumulative": False}
    assert property_of(option) == {"type": "boolean"}


def test_flag_with_another_off_spelling_is_not_negatable() -> None:
    assert "negatable" not in flag_of(click.Option(["--enable/--disable"]))


def test_flag_that_starts_on_carries_default_true() -> None:
    option = click.Option(["--wait/--no-wait"], default=True)
    assert flag_of(option)["default"] == ["true"]
    assert property_of(option)["default"] is True


def test_count_option_is_left_out_of_the_schema() -> None:
    entry = leaf_entry(click.Option(["-v", "--verbose"], count=True))
    assert entry["restricted_schema"]["properties"] == {}
    assert entry["flags"][0]["cumulative"] is True


def test_option_taking_two_values_is_left_out_of_the_schema() -> None:
    assert schema_of(click.Option(["--point"], nargs=2, type=int))["properties"] == {}


def test_option_without_a_long_name_is_left_out_of_the_schema() -> None:
    assert schema_of(click.Option(["-q"], is_flag=True))["properties"] == {}


def test_short_option_is_given_as_its_rune_number() -> None:
    assert flag_of(click.Option(["-c", "--context"]))["short"] == ord("c")


def test_envvar_and_metavar_become_envar_and_place_holder() -> None:
    flag = flag_of(click.Option(["--context"], envvar="APP_CONTEXT", metavar="NAME"))
    assert (flag["envar"], flag["place_holder"]) == ("APP_CONTEXT", "NAME")


def test_argument_help_becomes_its_description() -> None:
    entry = leaf_entry(click.Argument(["message"], help="What to say"))
    assert entry["args"][0]["help"] == "What to say"
    assert entry["restricted_schema"]["properties"]["message"]["description"] == "What to say"


def test_help_splits_into_short_and_long() -> None:
    entry = leaf_entry(help_text="Restart a service\nquickly.\n\nIt stops first.\n\nThen starts.")
    assert entry["help"] == "Restart a service quickly."
    assert entry["help_long"] == "It stops first.\n\nThen starts."


def test_single_paragraph_help_has_no_long_help() -> None:
    assert "help_long" not in leaf_entry(help_text="Restart a service")


def test_text_after_a_form_feed_stays_private() -> None:
    entry = leaf_entry(help_text="Restart a service\n\nDetails.\f\n:param name: internal")
    assert entry["help_long"] == "Details."


def test_explicit_short_help_is_the_help_and_the_docstring_the_long_help() -> None:
    command = click.Command("leaf", short_help="Restart", help="Restart a service fully.")
    entry = application_model(click.Group("app", commands=[command]))["commands"][0]
    assert (entry["help"], entry["help_long"]) == ("Restart", "Restart a service fully.")


def test_root_options_are_global_flags_and_stay_out_of_leaf_schemas() -> None:
    group = click.Group(
        "app",
        params=[click.Option(["--context"], help="Where")],
        commands=[click.Command("leaf", callback=nothing)],
    )
    model = application_model(group)
    assert model["flags"] == [
        {"name": "context", "help": "Where", "boolean": False, "cumulative": False}
    ]
    assert model["commands"][0]["restricted_schema"]["properties"] == {}


def test_eager_options_that_hold_no_value_are_not_flags() -> None:
    group = click.version_option("1.0")(click.Group("app"))
    assert "flags" not in application_model(group)


def test_nested_groups_keep_the_command_tree() -> None:
    remove = click.Command("rm", callback=nothing, params=[click.Argument(["stream"])])
    streams = click.Group("stream", help="Streams", commands=[remove])
    model = application_model(click.Group("app", commands=[streams]))
    stream = model["commands"][0]
    assert stream["name"] == "stream"
    assert stream["commands"][0]["name"] == "rm"
    assert stream["commands"][0]["restricted_schema"]["required"] == ["stream"]


def test_every_command_carries_a_restricted_schema() -> None:
    leaf = click.Command("rm", callback=nothing)
    model = application_model(click.Group("app", commands=[click.Group("stream", commands=[leaf])]))
    assert all("restricted_schema" in command for command in every_command(model["commands"]))


def test_intermediate_group_options_reach_its_leaves() -> None:
    leaf = click.Command("rm", callback=nothing, params=[click.Option(["--force"], is_flag=True)])
    streams = click.Group("stream", params=[click.Option(["--server"])], commands=[leaf])
    remove = application_model(click.Group("app", commands=[streams]))["commands"][0]["commands"][0]
    assert [flag["name"] for flag in remove["flags"]] == ["server", "force"]
    assert list(remove["restricted_schema"]["properties"]) == ["server", "force"]


def test_hidden_command_is_flagged_hidden() -> None:
    group = click.Group("app", commands=[click.Command("dump", hidden=True, callback=nothing)])
    assert application_model(group)["commands"][0]["hidden"] is True


def test_tags_reach_the_command() -> None:
    command = fisk_tags("ai:confirm", "impact:rw")(click.Command("rm", callback=nothing))
    model = application_model(click.Group("app", commands=[command]))
    assert model["commands"][0]["tags"] == ["ai:confirm", "impact:rw"]


def test_untagged_command_has_no_tags_key() -> None:
    assert "tags" not in leaf_entry()


def test_name_and_version_can_be_given() -> None:
    model = application_model(click.Group("cli"), name="ops", version="1.2.3")
    assert (model["name"], model["version"]) == ("ops", "1.2.3")


def test_name_defaults_to_the_click_name_and_version_is_omitted() -> None:
    model = application_model(click.Group("ops", help="Operate things"))
    assert model == {"name": "ops", "help": "Operate things"}


def test_plain_command_is_presented_as_the_only_command() -> None:
    command = click.Command("greet", help="Greet someone", params=[click.Argument(["who"])])
    model = application_model(command)
    assert [entry["name"] for entry in model["commands"]] == ["greet"]
    assert model["commands"][0]["restricted_schema"]["required"] == ["who"]


@pytest.fixture
def rich_application() -> click.Group:
    @click.group(name="shop")
    @click.option("--region", help="Region")
    def shop(region: str | None) -> None:
        """Run the shop"""

    @fisk_tags("ai:confirm")
    @shop.command()
    @click.option("--quantity", type=click.IntRange(1, 10), default=1, help="How many")
    @click.option("--price", type=float, help="Unit price")
    @click.option("--color", type=click.Choice(["red", "blue"]), help="Color")
    @click.option("--gift/--no-gift", help="Wrap it")
    @click.option("--note", multiple=True, help="Notes")
    @click.argument("item")
    @click.argument("extras", nargs=-1)
    def order(**_: Any) -> None:
        """Order an item"""

    return shop


def test_every_restricted_schema_is_a_valid_draft_2020_12_schema(
    rich_application: click.Group,
) -> None:
    model = application_model(rich_application)
    for command in every_command(model["commands"]):
        jsonschema.Draft202012Validator.check_schema(command["restricted_schema"])


def test_restricted_schema_accepts_a_sample_call(rich_application: click.Group) -> None:
    schema = application_model(rich_application)["commands"][0]["restricted_schema"]
    call = {
        "item": "socks",
        "quantity": 3,
        "price": 2.5,
        "color": "red",
        "gift": True,
        "note": ["soft", "warm"],
        "extras": ["box"],
    }
    jsonschema.Draft202012Validator(schema).validate(call)


@pytest.mark.parametrize(
    "call",
    [
        {"item": "socks", "quantity": "three"},
        {"item": "socks", "quantity": 11},
        {"item": "socks", "color": "green"},
        {"item": "socks", "gift": "yes"},
        {"item": "socks", "region": "eu"},
        {"quantity": 1},
    ],
)
def test_restricted_schema_rejects_a_wrong_call(
    rich_application: click.Group, call: dict[str, Any]
) -> None:
    schema = application_model(rich_application)["commands"][0]["restricted_schema"]
    assert not jsonschema.Draft202012Validator(schema).is_valid(call)
