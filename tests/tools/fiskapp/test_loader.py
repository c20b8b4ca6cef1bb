import copy
from typing import Any

import pytest

from fisk_ai.tools.fiskapp.loader import ApplicationLoadError, GlobalFlagInfo, load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.selection import ToolFilter
from tests.fakes.fiskapp import application, arg, command, flag, sample_model


def load(model: dict[str, Any], **options: Any) -> Any:
    return load_application(ApplicationModel.model_validate(model), "./ops", **options)


def names(model: dict[str, Any], **options: Any) -> list[str]:
    return [tool.name for tool in load(model, **options).tools]


def test_leaves_become_tools_named_by_their_path() -> None:
    assert names(sample_model()) == ["status", "stream_ls", "stream_rm", "cache_purge"]


def test_tools_carry_the_display_command_and_app_path() -> None:
    tool = load(sample_model()).tools[2]

    assert tool.command_line == "stream rm"
    assert tool.app_path == "./ops"


def test_include_and_exclude_select_tools() -> None:
    selected = names(
        sample_model(),
        include=ToolFilter(tools=("^stream",)),
        exclude=ToolFilter(tags=("impact:rw",)),
    )

    assert selected == ["stream_ls"]


def test_include_cannot_bring_back_a_denied_command() -> None:
    assert names(sample_model(), include=ToolFilter(tools=("secrets",))) == []


def test_application_name_and_version_are_reported() -> None:
    loaded = load(sample_model())

    assert (loaded.name, loaded.version) == ("ops", "1.0.0")


def test_two_commands_making_the_same_tool_name_abort_naming_both() -> None:
    model = application(commands=[command("a_b"), command("a", commands=[command("b")])])

    with pytest.raises(ApplicationLoadError) as raised:
        load(model)

    assert 'commands "a_b" and "a b" both become the tool "a_b"' in str(raised.value)


def test_unknown_ai_tags_and_conflicts_are_warnings() -> None:
    model = application(
        commands=[
            command("ls", tags=["ai:readonly"]),
            command("rm", tags=["ai:read_only", "ai:destructive"]),
        ]
    )

    warnings = load(model).warnings

    assert len(warnings) == 2
    assert '"ls"' in warnings[0]
    assert '"rm"' in warnings[1]


def test_globals_are_not_exposed_unless_allowlisted() -> None:
    tool = load(sample_model()).tools[0]

    assert "context" not in tool.input_schema["properties"]


def test_an_allowlisted_global_is_merged_into_every_leaf() -> None:
    loaded = load(sample_model(), global_flags=["context"])

    for tool in loaded.tools:
        assert tool.input_schema["properties"]["context"] == {
            "type": "string",
            "description": "Global flag: Fleet context to operate on",
        }
        assert "context" not in tool.input_schema.get("required", [])


def test_merging_never_changes_the_application_models_schema() -> None:
    model = ApplicationModel.model_validate(sample_model())
    before = copy.deepcopy(model.commands[3].commands[1].input_schema)

    load_application(model, "./ops", global_flags=["context"])

    assert model.commands[3].commands[1].input_schema == before


def test_global_completions_become_an_enum_and_help_defaults() -> None:
    model = application(
        flags=[flag("region", completions=["eu", "us"])],
        commands=[command("ls")],
    )

    schema = load(model, global_flags=["region"]).tools[0].input_schema

    assert schema["properties"]["region"] == {
        "type": "string",
        "enum": ["eu", "us"],
        "description": "Global flag",
    }


def test_boolean_and_cumulative_globals_keep_their_shape() -> None:
    model = application(
        flags=[flag("debug", "Debug", boolean=True), flag("server", "Servers", cumulative=True)],
        commands=[command("ls")],
    )

    properties = load(model, global_flags=["debug", "server"]).tools[0].input_schema["properties"]

    assert properties["debug"]["type"] == "boolean"
    assert properties["server"]["type"] == "array"
    assert properties["server"]["items"] == {"type": "string"}


def test_a_required_global_is_always_exposed_and_required() -> None:
    model = application(
        flags=[flag("token", "Auth token", required=True)],
        commands=[command("ls")],
    )

    loaded = load(model)

    assert loaded.tools[0].input_schema["required"] == ["token"]
    assert loaded.global_flags == (
        GlobalFlagInfo(name="token", help="Auth token", required=True, exposed=True),
    )


def test_a_required_global_with_a_default_is_optional() -> None:
    model = application(
        flags=[flag("server", required=True, default=["localhost"])],
        commands=[command("ls")],
    )

    schema = load(model).tools[0].input_schema

    assert "server" in schema["properties"]
    assert "required" not in schema


def test_a_global_clashing_with_a_command_parameter_is_skipped_for_that_command() -> None:
    model = application(
        flags=[flag("context", "Global context")],
        commands=[
            command("use", args=[arg("context", "Context to select", required=True)]),
            command("ls"),
        ],
    )

    use, ls = load(model, global_flags=["context"]).tools

    assert use.input_schema["properties"]["context"]["description"] == "Context to select"
    assert use.global_flags == ()
    assert ls.input_schema["properties"]["context"]["description"] == "Global flag: Global context"


def test_an_unknown_global_flag_is_an_error_listing_valid_ones() -> None:
    with pytest.raises(ApplicationLoadError) as raised:
        load(sample_model(), global_flags=["contxt"])

    message = str(raised.value)
    assert message.startswith('global_flags entry "contxt" is not a global flag')
    assert "the exposable global flags are: context" in message


def test_a_framework_flag_cannot_be_exposed() -> None:
    with pytest.raises(ApplicationLoadError, match='global_flags entry "help" is a flag fisk adds'):
        load(sample_model(), global_flags=["help"])


def test_a_hidden_flag_cannot_be_exposed() -> None:
    with pytest.raises(ApplicationLoadError, match='global_flags entry "trace" is a hidden flag'):
        load(sample_model(), global_flags=["trace"])


def test_global_flag_listing_skips_hidden_and_framework_flags() -> None:
    loaded = load(sample_model(), global_flags=["context"])

    assert loaded.global_flags == (
        GlobalFlagInfo(
            name="context", help="Fleet context to operate on", required=False, exposed=True
        ),
    )


def test_secret_env_names_travel_with_each_tool() -> None:
    loaded = load(sample_model(), secret_env_names=["EMBED_KEY"])

    assert all(tool.secret_env_names == ("EMBED_KEY",) for tool in loaded.tools)
