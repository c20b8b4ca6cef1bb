"""Model arguments turned into a fisk command line, by the rules fisk itself parses them with.

The result is an argument vector, never a shell string. Flags always render as one
``--name=value`` token, and positionals follow a ``--``, so no model-supplied value can be read as
a flag.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fisk_ai.tools.fiskapp.model import ArgModel, CommandModel, FlagModel
from fisk_ai.tools.validation import JsonFloat, json_kind

_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})


class ArgvError(ValueError):
    """Arguments that cannot be expressed on the command line; the message is for the model."""


def render_argv(
    command: CommandModel,
    globals_: Sequence[FlagModel],
    arguments: Mapping[str, Any],
    *,
    path: Sequence[str] | None = None,
) -> list[str]:
    """The argument vector after the application path for one call of ``command``.

    Order: the command path (``path``, else the command's own name), the exposed global flags,
    the command's flags in declared order, then ``--`` and the positionals when any is given.
    A global that shares a name with the command's own flag or argument is left to the command.
    """
    local_names = {flag.name for flag in command.flags} | {arg.name for arg in command.args}
    exposed_globals = [flag for flag in globals_ if flag.name not in local_names]
    global_names = {flag.name for flag in exposed_globals}
    for key in arguments:
        if key not in local_names and key not in global_names:
            raise ArgvError(f'unknown property "{key}"')

    argv = list(path) if path is not None else [command.name]
    argv += _render_flags(exposed_globals, arguments)
    argv += _render_flags(command.flags, arguments)
    positionals = _render_positionals(command.args, arguments)
    if positionals:
        argv.append("--")
        argv += positionals
    return argv


def _render_flags(flags: Sequence[FlagModel], arguments: Mapping[str, Any]) -> list[str]:
    rendered: list[str] = []
    for flag in flags:
        if flag.name not in arguments:
            continue
        try:
            rendered += _render_flag(flag, arguments[flag.name])
        except ArgvError as exc:
            raise ArgvError(f'flag "{flag.name}": {exc}') from None
    return rendered


def _render_flag(flag: FlagModel, value: Any) -> list[str]:
    if flag.boolean:
        if not isinstance(value, bool):
            raise ArgvError(f"expected boolean, got {json_kind(value)}")
        if flag.negatable:
            return [f"--{flag.name}" if value else f"--no-{flag.name}"]
        if value:
            return [f"--{flag.name}"]
        # Leaving the flag out is the only way to say false; when it defaults to true that
        # would silently do the opposite of what was asked.
        if any(default in _GO_TRUE for default in flag.default):
            raise ArgvError("cannot be set to false: the flag has no negation and defaults to true")
        return []
    if isinstance(value, list):
        return [f"--{flag.name}={_scalar(item)}" for item in value]
    if isinstance(value, dict):
        return [f"--{flag.name}={_scalar(key)}={_scalar(value[key])}" for key in sorted(value)]
    return [f"--{flag.name}={_scalar(value)}"]


def _render_positionals(args: Sequence[ArgModel], arguments: Mapping[str, Any]) -> list[str]:
    if not args:
        return []
    for index, arg in enumerate(args):
        if arg.cumulative and index != len(args) - 1:
            raise ArgvError(f'argument "{arg.name}" is cumulative but is not the last argument')

    last_supplied = max((i for i, arg in enumerate(args) if arg.name in arguments), default=-1)
    rendered: list[str] = []
    for arg in args[: last_supplied + 1]:
        if arg.name not in arguments:
            # A command line cannot skip a positional, so an earlier one needs its default.
            if not arg.default:
                raise ArgvError(
                    f'argument "{arg.name}" must be set because a later argument is set'
                )
            rendered += arg.default
            continue
        value = arguments[arg.name]
        try:
            if isinstance(value, list):
                rendered += [_scalar(item) for item in value]
            else:
                rendered.append(_scalar(value))
        except ArgvError as exc:
            raise ArgvError(f'argument "{arg.name}": {exc}') from None
    return rendered


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        if "\x00" in value:
            raise ArgvError("the value holds a NUL byte, which no command line can carry")
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, JsonFloat):
        return value.literal
    if isinstance(value, int | float):
        return json.dumps(value)
    raise ArgvError(f"unsupported value type {json_kind(value)}")
