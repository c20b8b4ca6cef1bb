import json
from pathlib import Path

from fisk_ai.tools.base import (
    BehaviorDescriber,
    Confirmable,
    ExecDeps,
    Kind,
    Presentation,
    Tool,
)
from fisk_ai.tools.tags import Behavior
from tests.fakes.fiskapp import application, arg, command, flag, write_fake_app
from tests.tools.fiskapp.leaf_tools import tool_for


def test_it_is_a_tool_with_gating_and_behaviour() -> None:
    tool = tool_for(command("ls", "List"))

    assert isinstance(tool, Tool)
    assert isinstance(tool, Confirmable)
    assert isinstance(tool, BehaviorDescriber)
    assert (tool.kind, tool.presentation) == (Kind.APPLICATION, Presentation.COMMAND)
    assert tool.mcp_exposable and tool.a2a_exposable


def test_human_description_is_help_else_long_help() -> None:
    assert tool_for(command("ls", "List", help_long="Lists things")).description == "List"
    assert tool_for(command("ls", help_long="Lists things")).description == "Lists things"


def test_model_description_joins_short_and_long_help_and_tags() -> None:
    tool = tool_for(command("ls", "List streams", help_long="Shows every stream.", tags=["a", "b"]))

    assert tool.model_description == "List streams\n\nShows every stream.\n\nTags: a, b"


def test_model_description_keeps_only_the_longer_help_when_one_contains_the_other() -> None:
    assert tool_for(command("ls", "List", help_long="List streams")).model_description == (
        "List streams"
    )
    assert tool_for(command("ls", "List streams", help_long="streams")).model_description == (
        "List streams"
    )


def test_model_description_is_only_tags_without_help() -> None:
    assert tool_for(command("ls", tags=["impact:ro"])).model_description == "Tags: impact:ro"


def test_definition_carries_the_model_description_and_schema() -> None:
    tool = tool_for(command("ls", "List", tags=["x"]))

    definition = tool.definition(defer_loading=True)

    assert definition.name == "ls"
    assert definition.description == "List\n\nTags: x"
    assert definition.input_schema == tool.input_schema
    assert definition.defer_loading


def test_no_defer_tag_keeps_the_definition_loaded() -> None:
    assert not tool_for(command("ls", tags=["ai:no_defer"])).definition(True).defer_loading


def test_behaviour_comes_from_tags() -> None:
    assert tool_for(command("ls", tags=["ai:read_only"])).behavior() == Behavior(read_only=True)


def test_confirm_trigger_uses_configured_tags() -> None:
    tool = tool_for(command("purge", tags=["impact:rw"]))

    assert tool.confirm_trigger(["impact:rw"]) == "impact:rw"
    assert tool.confirm_trigger([]) is None


def test_display_renders_the_command_line() -> None:
    tool = tool_for(
        command("rm", flags=[flag("force", boolean=True)], args=[arg("stream", required=True)])
    )

    assert tool.display('{"stream": "ORDERS", "force": true}') == "rm --force -- ORDERS"


def test_display_falls_back_to_the_command_path() -> None:
    assert tool_for(command("rm")).display("{not json") == "rm"


async def test_invalid_json_is_an_error_result() -> None:
    outcome = await tool_for(command("ls")).execute("{", ExecDeps())

    assert outcome.is_error
    assert outcome.exec is None
    assert "not valid JSON" in outcome.output


async def test_validation_happens_before_anything_runs(tmp_path: Path) -> None:
    tool = tool_for(command("rm", args=[arg("stream", required=True)]), str(tmp_path / "absent"))

    outcome = await tool.execute("{}", ExecDeps())

    assert outcome.is_error
    assert outcome.output == (
        'tool "rm" was called without required parameter(s): stream. required: stream'
    )


async def test_an_unexpressible_argument_is_an_error_result() -> None:
    tool = tool_for(command("ls", flags=[flag("cache", boolean=True, default=["true"])]))

    outcome = await tool.execute('{"cache": false}', ExecDeps())

    assert outcome.is_error
    assert outcome.output.startswith('building command line for "ls": flag "cache"')


async def test_an_application_that_cannot_start_is_an_error_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "absent"

    outcome = await tool_for(command("ls"), str(missing)).execute("", ExecDeps())

    assert outcome.is_error
    assert outcome.output.startswith(f'application_path "{missing}" could not be run for "ls"')


async def test_a_non_zero_exit_is_a_normal_outcome(tmp_path: Path) -> None:
    leaf = command("ls", action={"kind": "echo", "exit_code": 2})
    app = write_fake_app(tmp_path, application(commands=[leaf]))

    outcome = await tool_for(leaf, str(app)).execute("null", ExecDeps())

    assert not outcome.is_error
    assert outcome.exec is not None
    assert outcome.exec.exit_code == 2
    assert json.loads(outcome.model_content)["exit_code"] == 2


async def test_the_command_runs_in_the_work_dir_with_a_matching_pwd(tmp_path: Path) -> None:
    leaf = command("ls")
    app = write_fake_app(tmp_path, application(commands=[leaf]))
    work_dir = tmp_path / "run"
    work_dir.mkdir()

    outcome = await tool_for(leaf, str(app)).execute("", ExecDeps(work_dir=work_dir))

    echoed = json.loads(outcome.output)
    assert Path(echoed["cwd"]) == work_dir
    assert echoed["env"]["PWD"] == str(work_dir)
