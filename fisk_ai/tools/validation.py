"""Model arguments, decoded and checked against a tool's schema before anything runs.

Validation comes before the confirm gate, so an operator is never asked to approve a call that
could not run. Every message here is read by the model, which is expected to correct the call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fisk_ai.errors import BoundedInputError
from fisk_ai.llm.types import ContentBlock, Message, ToolUseBlock
from fisk_ai.tools.base import ShowsCommand, Tool
from fisk_ai.util import bounded, jsonx

_VALIDATOR_CACHE_LIMIT = 256
# Keyed by id(schema); the schema is kept beside its validator so the id cannot be reused.
_validators: dict[int, tuple[Mapping[str, Any], Any]] = {}


class ArgumentsError(ValueError):
    """Arguments the model sent could not be used; the message is for the model."""


class JsonFloat(float):
    """A JSON number with a fraction or exponent that remembers how it was written.

    It behaves as a float for schema checks, while ``literal`` lets a command line carry the
    number exactly as the model wrote it (``1.50`` stays ``1.50``, ``1e3`` stays ``1e3``).
    """

    literal: str

    def __new__(cls, literal: str) -> JsonFloat:
        number = super().__new__(cls, literal)
        number.literal = literal
        return number


UNREADABLE_INPUT_KEY = "fisk_unreadable_input"
"""The one key of the stand-in input ``holdable_message`` gives a call whose input cannot be
read; its value is the sentence the model reads as the call's error result."""


def parse_arguments(tool_name: str, text: str) -> dict[str, Any]:
    """Decode a tool call's raw JSON arguments into an object.

    Empty text and ``null`` mean no arguments. Numbers with a fraction or exponent decode to
    ``JsonFloat``; integers stay ``int``. The stand-in input of an unreadable call is refused
    with the sentence it carries.
    """
    stripped = text.strip()
    if stripped in ("", "null"):
        return {}
    try:
        # A lone surrogate can become neither an argument vector nor a file: refused here, the
        # model reads why and corrects the call.
        decoded = bounded.loads_json(
            stripped,
            what="the text",
            parse_float=JsonFloat,
            surrogates=jsonx.Surrogates.REFUSE,
        )
    except BoundedInputError as exc:
        raise ArgumentsError(_unreadable(tool_name, exc.problem)) from None
    if decoded is None:
        return {}
    if not isinstance(decoded, dict):
        raise ArgumentsError(
            f'tool "{tool_name}" was called with arguments that are not a JSON object '
            f"(got {json_kind(decoded)})"
        )
    reason = decoded.get(UNREADABLE_INPUT_KEY)
    if len(decoded) == 1 and isinstance(reason, str):
        raise ArgumentsError(reason)
    return decoded


def holdable_message(message: Message) -> Message:
    """``message`` with every tool call whose input no reader could take (nested past the
    bound, not JSON, a number out of range) given a stand-in input instead: an object holding
    why, which ``parse_arguments`` refuses with that sentence.

    The loop applies it to a reply before journaling it, so the journal and every later request
    hold a readable input, and the call becomes an error result the model reads, not an abort.
    A lone surrogate is left as it is: the journal keeps it and validation refuses it.
    """
    replaced = False
    blocks: list[ContentBlock] = []
    for block in message.content:
        reason = _unholdable_reason(block) if isinstance(block, ToolUseBlock) else None
        if isinstance(block, ToolUseBlock) and reason is not None:
            stand_in = json.dumps({UNREADABLE_INPUT_KEY: reason}, ensure_ascii=False)
            blocks.append(ToolUseBlock(block.id, block.name, stand_in))
            replaced = True
        else:
            blocks.append(block)
    return Message(message.role, tuple(blocks)) if replaced else message


def _unholdable_reason(call: ToolUseBlock) -> str | None:
    stripped = call.input.strip()
    if stripped in ("", "null"):
        return None
    try:
        bounded.loads_json(
            stripped, what="the text", surrogates=jsonx.Surrogates.KEEP, allow_constants=True
        )
    except BoundedInputError as exc:
        return _unreadable(call.name, exc.problem)
    return None


def _unreadable(tool_name: str, problem: str) -> str:
    return f'tool "{tool_name}" was called with arguments that cannot be read: the text {problem}'


def validate_arguments(
    tool_name: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]
) -> str | None:
    """The reason ``arguments`` cannot be used with ``schema``, or None when they can.

    Missing required parameters are reported first, by key presence alone: an explicit null,
    false or empty value counts as supplied. Then the full JSON Schema (Draft 2020-12) check.
    """
    required = _names(schema.get("required"))
    missing = [name for name in required if name not in arguments]
    if missing:
        return (
            f'tool "{tool_name}" was called without required parameter(s): '
            f"{', '.join(missing)}. {_roster(schema)}"
        )
    return _schema_problem(tool_name, schema, arguments)


def argument_problem(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """Why ``arguments`` cannot run ``tool``, or None when they can: the schema refuses them, or
    a command tool cannot build an argument vector from them (a NUL byte, an unknown property).
    Checked before any gate, so nobody approves a call that cannot run."""
    problem = validate_arguments(tool.name, tool.input_schema, arguments)
    if problem is not None:
        return problem
    return rendered_argv(tool, arguments)[1]


def rendered_argv(tool: Tool, arguments: Mapping[str, Any]) -> tuple[tuple[str, ...], str | None]:
    """The argument vector a call to ``tool`` shows and runs after the application path, and
    why it could not be built (the vector is then the bare command path). A tool that runs no
    command has an empty vector."""
    if not isinstance(tool, ShowsCommand):
        return (), None
    try:
        return tuple(tool.argv(arguments)), None
    except ValueError as exc:
        return (
            tuple(tool.command_line.split()),
            f'building command line for "{tool.command_line}": {exc}',
        )


def json_kind(value: object) -> str:
    """The JSON name of a decoded value's kind, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _schema_problem(
    tool_name: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]
) -> str | None:
    from jsonschema.exceptions import best_match  # slow to import; only a tool call needs it

    try:
        error = best_match(_validator(schema).iter_errors(arguments))
    except Exception as exc:
        # The schema came from another program; a broken one must become a tool error the run
        # survives, not a crash of the loop.
        return f'tool "{tool_name}" has an input schema that cannot be checked: {exc}'
    if error is None:
        return None

    where = _path_text(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        known = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        unknown = [key for key in error.instance if key not in known]
        if not where:
            return (
                f'tool "{tool_name}" was called with unknown parameter(s): '
                f"{', '.join(unknown)}. {_roster(schema)}"
            )
        return f'tool "{tool_name}" parameter "{where}" has unknown key(s): {", ".join(unknown)}'
    if not where:
        return f'tool "{tool_name}" was called with invalid arguments: {error.message}'
    return f'tool "{tool_name}" parameter "{where}" is invalid: {error.message}'


def _validator(schema: Mapping[str, Any]) -> Any:
    cached = _validators.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    if len(_validators) >= _VALIDATOR_CACHE_LIMIT:
        _validators.clear()
    _validators[id(schema)] = (schema, validator)
    return validator


def _roster(schema: Mapping[str, Any]) -> str:
    required = _names(schema.get("required"))
    properties = schema.get("properties")
    names = list(properties) if isinstance(properties, Mapping) else []
    optional = sorted(name for name in names if name not in required)
    roster = f"required: {', '.join(required)}" if required else "required: none"
    if optional:
        roster += f"; optional: {', '.join(optional)}"
    return roster


def _names(value: object) -> list[str]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [item for item in value if isinstance(item, str)]


def _path_text(path: Sequence[object]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text
