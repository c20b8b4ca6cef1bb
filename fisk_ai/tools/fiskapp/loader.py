"""From an introspected application model to the tools a run offers.

Leaves become tools named by their path joined with ``_``. Selection removes ``ai:deny`` first,
then applies include and exclude. Allowlisted global flags are merged into every leaf's schema.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fisk_ai.errors import FiskError
from fisk_ai.tools.fiskapp.introspect import check_application_model, visible_leaves
from fisk_ai.tools.fiskapp.model import ApplicationModel, CommandModel, FlagModel
from fisk_ai.tools.fiskapp.tool import FiskCommandTool
from fisk_ai.tools.selection import ToolFilter, is_selected
from fisk_ai.tools.tags import inspect_tags

# Flags fisk adds to every application: exposing one would make a tool print usage, a version
# or a completion script instead of running.
FRAMEWORK_FLAGS = frozenset(
    {
        "help",
        "help-long",
        "help-man",
        "help-llm",
        "help-compact",
        "completion-bash",
        "completion-script-bash",
        "completion-script-zsh",
        "fisk-introspect",
        "version",
    }
)


class ApplicationLoadError(FiskError):
    """The application's commands could not be turned into tools under this configuration."""


@dataclass(frozen=True)
class GlobalFlagInfo:
    """An application-level flag an operator could expose, for ``fisk info``.

    ``exposed`` is true when global_flags lists it or the application marks it required.
    """

    name: str
    help: str
    required: bool
    exposed: bool


@dataclass(frozen=True)
class LoadedApplication:
    app_path: str
    name: str
    version: str
    tools: tuple[FiskCommandTool, ...]
    global_flags: tuple[GlobalFlagInfo, ...]
    warnings: tuple[str, ...]


def load_application(
    model: ApplicationModel,
    app_path: str,
    *,
    include: ToolFilter | None = None,
    exclude: ToolFilter | None = None,
    global_flags: Sequence[str] = (),
    secret_env_names: Sequence[str] = (),
) -> LoadedApplication:
    """The tools ``model`` yields under the operator's selection and global flag allowlist.

    ``secret_env_names`` are extra variables (beyond provider and OTLP credentials) scrubbed
    from every command's environment.
    """
    check_application_model(model, app_path)
    exposed_globals = _exposed_globals(model, app_path, global_flags)
    exposed_names = {flag.name for flag in exposed_globals}

    tools: list[FiskCommandTool] = []
    warnings: list[str] = []
    path_of: dict[str, tuple[str, ...]] = {}
    for path, command in visible_leaves(model.commands):
        name = "_".join(path)
        if not is_selected(name, command.tags, include=include, exclude=exclude):
            continue
        if name in path_of:
            raise ApplicationLoadError(
                f'application_path "{app_path}" commands "{" ".join(path_of[name])}" and '
                f'"{" ".join(path)}" both become the tool "{name}"; exclude one of them'
            )
        path_of[name] = path
        applicable = _applicable_globals(exposed_globals, command)
        tools.append(
            FiskCommandTool(
                command=command,
                command_path=path,
                app_path=app_path,
                input_schema=_merged_schema(command.input_schema, applicable),
                global_flags=applicable,
                secret_env_names=tuple(secret_env_names),
            )
        )
        warnings += inspect_tags(name, command.tags).warnings

    infos = tuple(
        GlobalFlagInfo(
            name=flag.name,
            help=flag.help,
            required=flag.required,
            exposed=flag.name in exposed_names,
        )
        for flag in model.flags
        if _is_exposable(flag)
    )
    return LoadedApplication(
        app_path=app_path,
        name=model.name,
        version=model.version,
        tools=tuple(tools),
        global_flags=infos,
        warnings=tuple(warnings),
    )


def _is_exposable(flag: FlagModel) -> bool:
    return not flag.hidden and flag.name not in FRAMEWORK_FLAGS


def _exposed_globals(
    model: ApplicationModel, app_path: str, allowlist: Sequence[str]
) -> tuple[FlagModel, ...]:
    by_name = {flag.name: flag for flag in model.flags}
    exposable = [flag.name for flag in model.flags if _is_exposable(flag)]
    choices = (
        f"the exposable global flags are: {', '.join(exposable)}"
        if exposable
        else "it has no exposable global flags"
    )

    exposed: dict[str, FlagModel] = {}
    for name in allowlist:
        flag = by_name.get(name)
        if flag is None:
            raise ApplicationLoadError(
                f'global_flags entry "{name}" is not a global flag of application_path '
                f'"{app_path}"; {choices}'
            )
        if flag.name in FRAMEWORK_FLAGS:
            raise ApplicationLoadError(
                f'global_flags entry "{name}" is a flag fisk adds to every application and cannot '
                f"be exposed; {choices}"
            )
        if flag.hidden:
            raise ApplicationLoadError(
                f'global_flags entry "{name}" is a hidden flag of application_path "{app_path}" '
                f"and cannot be exposed; {choices}"
            )
        exposed.setdefault(flag.name, flag)

    # The application cannot run without a required global, so the model must be able to set it.
    for flag in model.flags:
        if flag.required and flag.name not in FRAMEWORK_FLAGS:
            exposed.setdefault(flag.name, flag)
    return tuple(exposed.values())


def _applicable_globals(
    exposed: Sequence[FlagModel], command: CommandModel
) -> tuple[FlagModel, ...]:
    own = {flag.name for flag in command.flags} | {arg.name for arg in command.args}
    return tuple(flag for flag in exposed if flag.name not in own)


def _merged_schema(schema: Any, globals_: Sequence[FlagModel]) -> dict[str, Any]:
    # A deep copy every time: the application model's schema stays untouched however the
    # tool's copy is used later.
    merged: dict[str, Any] = copy.deepcopy(schema)
    if not globals_:
        return merged
    properties = merged.get("properties")
    if not isinstance(properties, dict):
        properties = {}
        merged["properties"] = properties
    existing_required = merged.get("required")
    required = list(existing_required) if isinstance(existing_required, list) else []
    for flag in globals_:
        if flag.name in properties:
            continue
        properties[flag.name] = _global_flag_schema(flag)
        if flag.required and not flag.default:
            required.append(flag.name)
    if required:
        merged["required"] = required
    return merged


def _global_flag_schema(flag: FlagModel) -> dict[str, Any]:
    value: dict[str, Any] = {"type": "boolean"} if flag.boolean else {"type": "string"}
    if flag.completions and not flag.boolean:
        value["enum"] = list(flag.completions)
    schema: dict[str, Any] = {"type": "array", "items": value} if flag.cumulative else value
    schema["description"] = f"Global flag: {flag.help}" if flag.help else "Global flag"
    return schema
