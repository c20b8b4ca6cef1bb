"""Describe a click application as the ApplicationModel fisk prints for --fisk-introspect.

Optional keys are left out when empty or false, as Go's ``omitempty`` does, so the document
reads like one a fisk binary wrote.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Sequence
from typing import Any

import click

from fisk_ai.tools.introspect.tags import tags_of

JsonObject = dict[str, Any]


def application_model(
    cli: click.Group | click.Command, *, name: str | None = None, version: str | None = None
) -> dict[str, Any]:
    """The fisk ApplicationModel of a click application, as plain JSON-ready data.

    The root group's options are the application's global flags. A plain command (not a
    group) is presented as the application's only command, named after the application.
    """
    app_name = application_name(cli, name)
    model: JsonObject = {"name": app_name, "help": _full_help(cli)}
    if version:
        model["version"] = version
    context = click.Context(cli, info_name=app_name)
    if not isinstance(cli, click.Group):
        model["commands"] = [_command_entry(cli, app_name, context, inherited=())]
        return model
    own_options = _described_options(cli)
    if own_options:
        model["flags"] = [_flag_entry(option) for option in own_options]
    arguments = _arguments(cli)
    if arguments:
        model["args"] = [_arg_entry(argument) for argument in arguments]
    commands = _subcommand_entries(cli, context, inherited=())
    if commands:
        model["commands"] = commands
    return model


def application_name(cli: click.Command, name: str | None) -> str:
    """The name the application answers to: the one given, else the click command's own."""
    return name or cli.name or "app"


def _subcommand_entries(
    group: click.Group, context: click.Context, inherited: Sequence[click.Option]
) -> list[JsonObject]:
    entries: list[JsonObject] = []
    for command_name in group.list_commands(context):
        command = group.get_command(context, command_name)
        if command is None:
            continue
        child_context = click.Context(command, parent=context, info_name=command_name)
        entries.append(_command_entry(command, command_name, child_context, inherited))
    return entries


def _command_entry(
    command: click.Command,
    command_name: str,
    context: click.Context,
    inherited: Sequence[click.Option],
) -> JsonObject:
    short_help, long_help = _help_parts(command)
    entry: JsonObject = {"name": command_name, "help": short_help}
    if long_help:
        entry["help_long"] = long_help
    if command.hidden:
        entry["hidden"] = True
    tags = tags_of(command)
    if tags:
        entry["tags"] = tags
    options = _options_with_inherited(command, inherited)
    if options:
        entry["flags"] = [_flag_entry(option) for option in options]
    arguments = _arguments(command)
    if arguments:
        entry["args"] = [_arg_entry(argument) for argument in arguments]
    if isinstance(command, click.Group):
        # The group's own options reach its leaves too: run() moves them back behind the
        # group's name, since fisk-ai puts every flag after the full command path.
        passed_down = [*inherited, *_described_options(command)]
        commands = _subcommand_entries(command, context, passed_down)
        if commands:
            entry["commands"] = commands
    entry["restricted_schema"] = _restricted_schema(options, arguments)
    return entry


def _options_with_inherited(
    command: click.Command, inherited: Sequence[click.Option]
) -> list[click.Option]:
    own = _described_options(command)
    taken = {flag_name(option) for option in own}
    from_groups = [option for option in inherited if flag_name(option) not in taken]
    return [*from_groups, *own]


def _described_options(command: click.Command) -> list[click.Option]:
    # Eager options that hold no value (--help, --version) act and exit; they are not inputs.
    return [
        param
        for param in command.params
        if isinstance(param, click.Option) and not (param.is_eager and not param.expose_value)
    ]


def _arguments(command: click.Command) -> list[click.Argument]:
    return [param for param in command.params if isinstance(param, click.Argument)]


def _full_help(command: click.Command) -> str:
    return "\n\n".join(_help_paragraphs(command.help or command.short_help or ""))


def _help_parts(command: click.Command) -> tuple[str, str]:
    paragraphs = _help_paragraphs(command.help or "")
    if command.short_help:
        short_help = " ".join(command.short_help.split())
        long_help = "\n\n".join(paragraphs)
        return short_help, "" if long_help == short_help else long_help
    if not paragraphs:
        return "", ""
    return " ".join(paragraphs[0].split()), "\n\n".join(paragraphs[1:])


def _help_paragraphs(text: str) -> list[str]:
    # click hides everything after a form feed from help output, and a line holding only \b
    # is its "do not rewrap" marker; neither belongs in a description.
    visible = inspect.cleandoc(text.split("\f", 1)[0])
    paragraphs: list[str] = []
    current: list[str] = []
    for line in visible.splitlines():
        if line.strip() == "\b":
            continue
        if not line.strip():
            if current:
                paragraphs.append("\n".join(current))
                current = []
            continue
        current.append(line.rstrip())
    if current:
        paragraphs.append("\n".join(current))
    return paragraphs


def flag_name(option: click.Option) -> str:
    """The option's long name without dashes, which fisk-ai renders as ``--name``."""
    long_name = _long_name(option)
    if long_name is not None:
        return long_name
    return option.name or option.opts[0].lstrip("-+/")


def _long_name(option: click.Option) -> str | None:
    for declared in option.opts:
        if declared.startswith("--") and len(declared) > 2:
            return declared[2:]
    return None


def _short_rune(option: click.Option) -> int | None:
    for declared in option.opts:
        if len(declared) == 2 and declared[0] == "-" and declared[1] != "-":
            return ord(declared[1])
    return None


def _is_boolean_option(option: click.Option) -> bool:
    return bool(option.is_flag) or bool(option.count)


def _is_negatable(option: click.Option) -> bool:
    long_name = _long_name(option)
    return (
        option.is_bool_flag
        and long_name is not None
        and f"--no-{long_name}" in option.secondary_opts
    )


def _is_required(param: click.Parameter) -> bool:
    if param.required:
        return True
    # A prompted option with no value and no default would wait on a terminal that a tool
    # call never has, so for fisk-ai it must always be given.
    return (
        isinstance(param, click.Option)
        and param.prompt is not None
        and not param.is_flag
        and _static_default(param) is None
    )


def _envar(param: click.Parameter) -> str | None:
    if isinstance(param.envvar, str):
        return param.envvar or None
    if param.envvar:
        return str(param.envvar[0])
    return None


def _flag_entry(option: click.Option) -> JsonObject:
    entry: JsonObject = {"name": flag_name(option), "help": option.help or ""}
    short = _short_rune(option)
    if short is not None:
        entry["short"] = short
    default = _model_default(option)
    if default:
        entry["default"] = default
    envar = _envar(option)
    if envar:
        entry["envar"] = envar
    if option.metavar:
        entry["place_holder"] = option.metavar
    if _is_required(option):
        entry["required"] = True
    if option.hidden:
        entry["hidden"] = True
    entry["boolean"] = _is_boolean_option(option)
    if _is_negatable(option):
        entry["negatable"] = True
    entry["cumulative"] = bool(option.multiple) or bool(option.count)
    return entry


def _arg_entry(argument: click.Argument) -> JsonObject:
    entry: JsonObject = {"name": argument.name or "", "help": _argument_help(argument)}
    default = _model_default(argument)
    if default:
        entry["default"] = default
    envar = _envar(argument)
    if envar:
        entry["envar"] = envar
    if _is_required(argument):
        entry["required"] = True
    if getattr(argument, "hidden", False):
        entry["hidden"] = True
    entry["cumulative"] = argument.nargs == -1
    return entry


def _argument_help(argument: click.Argument) -> str:
    # click accepts help on arguments from 8.5 on; older versions have no such attribute.
    text = getattr(argument, "help", None)
    return text if isinstance(text, str) else ""


def _static_default(param: click.Parameter) -> Any:
    """The declared default when it is a fixed value, else None (unset or computed per call)."""
    value = param.to_info_dict().get("default")
    if callable(value):
        return None
    return value


def _model_default(param: click.Parameter) -> list[str]:
    value = _static_default(param)
    if isinstance(param, click.Option) and param.is_flag:
        # fisk lists no default for an off switch; only a switch that starts on matters,
        # because the model then has to ask for --no-name to turn it off.
        return ["true"] if param.is_bool_flag and value is True else []
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [_default_text(item) for item in value]
    return [_default_text(value)]


def _default_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return _choice_text(value)


def _choice_text(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return value.name
    return str(value)


def _restricted_schema(
    options: Sequence[click.Option], arguments: Sequence[click.Argument]
) -> JsonObject:
    properties: JsonObject = {}
    required: list[str] = []
    parameters: list[tuple[str, click.Parameter]] = [
        *((flag_name(option), option) for option in options),
        *((argument.name or "", argument) for argument in arguments),
    ]
    for property_name, param in parameters:
        if not property_name or property_name in properties:
            continue
        schema = parameter_schema(param)
        if schema is None:
            continue
        properties[property_name] = schema
        if _is_required(param):
            required.append(property_name)
    schema_object: JsonObject = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema_object["required"] = required
    return schema_object


def parameter_schema(param: click.Parameter) -> JsonObject | None:
    """The JSON Schema of one parameter, or None when fisk-ai could not render it faithfully.

    Left out: hidden options, count options, options without a ``--long`` name, options that
    take several values per use, and composite (tuple) types.
    """
    if isinstance(param, click.Option):
        schema = _option_value_schema(param)
        help_text = param.help or ""
    else:
        schema = _argument_value_schema(param)
        help_text = _argument_help(param) if isinstance(param, click.Argument) else ""
    if schema is None:
        return None
    if help_text:
        schema["description"] = help_text
    default = _schema_default(param, schema)
    if default is not None:
        schema["default"] = default
    return schema


def _option_value_schema(option: click.Option) -> JsonObject | None:
    if option.hidden or option.count or _long_name(option) is None:
        return None
    if option.is_flag:
        return {"type": "boolean"}
    if option.nargs != 1:
        return None
    item = _type_schema(option.type)
    if item is None:
        return None
    if option.multiple:
        return {"type": "array", "items": item}
    return item


def _argument_value_schema(param: click.Parameter) -> JsonObject | None:
    if getattr(param, "hidden", False):
        return None
    if param.type.is_composite:
        return None
    item = _type_schema(param.type)
    if item is None:
        return None
    if param.nargs == -1:
        array: JsonObject = {"type": "array", "items": item}
        if param.required:
            array["minItems"] = 1
        return array
    if param.nargs > 1:
        return {"type": "array", "items": item, "minItems": param.nargs, "maxItems": param.nargs}
    return item


def _type_schema(param_type: click.ParamType[Any]) -> JsonObject | None:
    if param_type.is_composite:
        return None
    if isinstance(param_type, click.types.BoolParamType):
        return {"type": "boolean"}
    if isinstance(param_type, click.IntRange | click.FloatRange):
        return _range_schema(param_type)
    if isinstance(param_type, click.types.IntParamType):
        return {"type": "integer"}
    if isinstance(param_type, click.types.FloatParamType):
        return {"type": "number"}
    if isinstance(param_type, click.Choice):
        return {"type": "string", "enum": [_choice_text(choice) for choice in param_type.choices]}
    return {"type": "string"}


def _range_schema(param_type: click.IntRange | click.FloatRange) -> JsonObject:
    schema: JsonObject = {"type": "integer" if isinstance(param_type, click.IntRange) else "number"}
    if param_type.min is not None:
        schema["exclusiveMinimum" if param_type.min_open else "minimum"] = param_type.min
    if param_type.max is not None:
        schema["exclusiveMaximum" if param_type.max_open else "maximum"] = param_type.max
    return schema


def _schema_default(param: click.Parameter, schema: JsonObject) -> Any:
    value = _static_default(param)
    if isinstance(param, click.Option) and param.is_flag:
        return True if param.is_bool_flag and value is True else None
    if value is None:
        return None
    if schema["type"] == "array":
        if not isinstance(value, list | tuple) or not value:
            return None
        items = [_json_value(item, schema["items"]) for item in value]
        return None if any(item is None for item in items) else items
    return _json_value(value, schema)


def _json_value(value: Any, schema: JsonObject) -> Any:
    """The value as JSON of the schema's type, or None when it is not plainly that."""
    expected = schema["type"]
    if expected == "boolean":
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    if expected == "integer":
        return value if isinstance(value, int) else None
    if expected == "number":
        return value if isinstance(value, int | float) else None
    if "enum" in schema:
        text = _choice_text(value)
        return text if text in schema["enum"] else None
    return value if isinstance(value, str) else None
