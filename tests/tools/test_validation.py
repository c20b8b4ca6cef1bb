import pytest

from fisk_ai.tools.validation import (
    ArgumentsError,
    JsonFloat,
    argument_problem,
    parse_arguments,
    validate_arguments,
)
from tests.fakes.fiskapp import arg, command, flag
from tests.tools.fiskapp.leaf_tools import tool_for

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "subject": {"type": "string"},
        "stream": {"type": "string"},
        "level": {"type": "string", "enum": ["info", "warn"]},
        "count": {"type": "integer", "minimum": 1},
        "force": {"type": "boolean"},
        "labels": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["subject", "stream"],
}


def test_missing_required_lists_missing_required_and_sorted_optional() -> None:
    problem = validate_arguments("do", SCHEMA, {})

    assert problem == (
        'tool "do" was called without required parameter(s): subject, stream. '
        "required: subject, stream; optional: count, force, labels, level"
    )


def test_missing_required_omits_optional_when_there_is_none() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}

    assert validate_arguments("x", schema, {}) == (
        'tool "x" was called without required parameter(s): a. required: a'
    )


def test_a_present_key_counts_as_supplied_whatever_its_value() -> None:
    schema = {"type": "object", "properties": {"a": {}}, "required": ["a"]}

    assert validate_arguments("x", schema, {"a": None}) is None


def test_valid_arguments_pass() -> None:
    arguments = {"subject": "hi", "stream": "ORDERS", "count": 2, "labels": ["a"]}

    assert validate_arguments("do", SCHEMA, arguments) is None


def test_wrong_type_names_the_parameter() -> None:
    problem = validate_arguments("do", SCHEMA, {"subject": "s", "stream": "o", "force": "yes"})

    assert problem is not None
    assert problem.startswith('tool "do" parameter "force" is invalid:')
    assert "boolean" in problem


def test_nested_problem_names_the_element() -> None:
    problem = validate_arguments("do", SCHEMA, {"subject": "s", "stream": "o", "labels": ["a", 1]})

    assert problem is not None
    assert 'parameter "labels[1]"' in problem


def test_unknown_parameter_is_named_with_the_roster() -> None:
    problem = validate_arguments("do", SCHEMA, {"subject": "s", "stream": "o", "forse": True})

    assert problem == (
        'tool "do" was called with unknown parameter(s): forse. '
        "required: subject, stream; optional: count, force, labels, level"
    )


def test_enum_violation_is_reported() -> None:
    problem = validate_arguments("do", SCHEMA, {"subject": "s", "stream": "o", "level": "debug"})

    assert problem is not None
    assert 'parameter "level"' in problem


def test_float_literal_still_validates_as_a_number() -> None:
    schema = {"type": "object", "properties": {"ratio": {"type": "number", "maximum": 2}}}

    assert validate_arguments("x", schema, parse_arguments("x", '{"ratio": 1.50}')) is None
    assert validate_arguments("x", schema, parse_arguments("x", '{"ratio": 2.5}')) is not None


def test_broken_schema_is_an_error_result_not_a_crash() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "nonsense"}}}

    problem = validate_arguments("x", schema, {"a": 1})

    assert problem is not None
    assert problem.startswith('tool "x" has an input schema that cannot be checked')


@pytest.mark.parametrize("text", ["", "  ", "null"])
def test_empty_and_null_arguments_mean_no_arguments(text: str) -> None:
    assert parse_arguments("x", text) == {}


def test_floats_remember_how_they_were_written() -> None:
    parsed = parse_arguments("x", '{"a": 1.50, "b": 1e3, "c": 7}')

    assert isinstance(parsed["a"], JsonFloat)
    assert parsed["a"].literal == "1.50"
    assert parsed["b"].literal == "1e3"
    assert parsed["c"] == 7
    assert type(parsed["c"]) is int


def test_invalid_json_is_an_error_naming_the_tool() -> None:
    with pytest.raises(
        ArgumentsError,
        match=r'^tool "x" was called with arguments that cannot be read: the text is not valid',
    ):
        parse_arguments("x", '{"a": ')


def test_non_object_arguments_are_an_error() -> None:
    with pytest.raises(ArgumentsError, match=r"not a JSON object \(got array\)"):
        parse_arguments("x", "[1, 2]")


def test_nan_is_not_json() -> None:
    with pytest.raises(ArgumentsError):
        parse_arguments("x", '{"a": NaN}')


def test_deeply_nested_arguments_are_an_error_the_model_reads() -> None:
    with pytest.raises(ArgumentsError, match="nests deeper than"):
        parse_arguments("x", '{"a": ' + "[" * 5000 + "]" * 5000 + "}")


def test_a_lone_surrogate_in_arguments_is_an_error_the_model_reads() -> None:
    with pytest.raises(ArgumentsError, match="lone surrogate"):
        parse_arguments("x", r'{"a": "bad\ud800"}')


def test_arguments_no_command_line_can_carry_are_a_problem_before_anything_runs() -> None:
    tool = tool_for(command("ls", flags=[flag("cache", boolean=True, default=["true"])]))

    problem = argument_problem(tool, {"cache": False})

    assert problem is not None
    assert problem.startswith('building command line for "ls": flag "cache"')


def test_a_schema_problem_is_named_before_the_command_line_is_built() -> None:
    tool = tool_for(command("rm", args=[arg("stream", required=True)]))

    assert argument_problem(tool, {}) == (
        'tool "rm" was called without required parameter(s): stream. required: stream'
    )


def test_arguments_a_command_can_run_are_no_problem() -> None:
    tool = tool_for(command("rm", args=[arg("stream", required=True)]))

    assert argument_problem(tool, {"stream": "ORDERS"}) is None
