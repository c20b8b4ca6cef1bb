import json
from pathlib import Path
from typing import Any

from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.fiskapp.tool import FiskCommandTool
from fisk_ai.tools.prepared import prepare_call
from tests.fakes.fiskapp import application, arg, command, flag, write_fake_app

STREAM_RM = command(
    "rm",
    flags=[flag("force", boolean=True)],
    args=[arg("stream", required=True)],
)


def command_tool(leaf: dict[str, Any], app_path: str = "./app") -> FiskCommandTool:
    model = ApplicationModel.model_validate(application(commands=[leaf]))
    return load_application(model, app_path).tools[0]


def test_a_call_is_rendered_to_the_vector_it_shows() -> None:
    prepared = prepare_call(command_tool(STREAM_RM), '{"stream": "ORDERS", "force": true}')

    assert prepared.problem is None
    assert prepared.argv == ("rm", "--force", "--", "ORDERS")
    assert prepared.display == "rm --force -- ORDERS"


def test_arguments_that_are_not_an_object_are_the_problem_and_show_none() -> None:
    prepared = prepare_call(command_tool(STREAM_RM), "[1]")

    assert not prepared.readable
    assert prepared.arguments == {}
    assert prepared.problem == (
        'tool "rm" was called with arguments that are not a JSON object (got array)'
    )


def test_a_schema_problem_is_named_though_the_call_still_shows_a_command_line() -> None:
    prepared = prepare_call(command_tool(STREAM_RM), '{"force": true}')

    assert prepared.problem == (
        'tool "rm" was called without required parameter(s): stream. '
        "required: stream; optional: force"
    )
    assert prepared.argv[0] == "rm"


def test_arguments_no_command_line_can_carry_show_the_bare_command_path() -> None:
    tool = command_tool(command("ls", flags=[flag("cache", boolean=True, default=["true"])]))

    prepared = prepare_call(tool, '{"cache": false}')

    assert prepared.argv == ("ls",)
    assert prepared.problem is not None
    assert prepared.problem.startswith('building command line for "ls": flag "cache"')


async def test_a_prepared_command_runs_the_vector_it_shows(tmp_path: Path) -> None:
    model = application(commands=[STREAM_RM])
    tool = command_tool(STREAM_RM, str(write_fake_app(tmp_path, model)))
    prepared = prepare_call(tool, '{"stream": "ORDERS", "force": true}')

    outcome = await prepared.execute(ExecDeps())

    assert tuple(json.loads(outcome.output)["argv"]) == prepared.argv


async def test_a_prepared_call_with_a_problem_runs_nothing_and_answers_it() -> None:
    prepared = prepare_call(command_tool(STREAM_RM, "/nonexistent/app"), "{}")

    outcome = await prepared.execute(ExecDeps())

    assert outcome.is_error
    assert outcome.output == prepared.problem
