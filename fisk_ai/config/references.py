"""${VAR} references in mcp_clients env, headers and url values.

The syntax is checked when the file is parsed, but nothing is read from the environment until a
session connects, so a host holding none of the credentials can still inspect the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from fisk_ai.config.errors import ConfigError

__all__ = ["reference_problem", "referenced_names", "resolve_references"]

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _scan(value: str) -> list[tuple[int, int, str]]:
    """Each ${NAME} in value as (start, end, name); ValueError describes a malformed one."""
    found: list[tuple[int, int, str]] = []
    position = 0
    while True:
        start = value.find("${", position)
        if start < 0:
            return found
        close = value.find("}", start + 2)
        if close < 0:
            raise ValueError(f'has "${{" at character {start + 1} without a closing "}}"')
        name = value[start + 2 : close]
        if not _VARIABLE_NAME.fullmatch(name):
            raise ValueError(
                f'refers to "${{{name}}}", which is not an environment variable name '
                "(letters, digits and _, not starting with a digit)"
            )
        found.append((start, close + 1, name))
        position = close + 1


def reference_problem(value: str) -> str | None:
    """What is wrong with the ${VAR} references in value, or None when they are well formed."""
    try:
        _scan(value)
    except ValueError as problem:
        return str(problem)
    return None


def referenced_names(value: str) -> list[str]:
    """The variable names value refers to, in order; value must be well formed."""
    return [name for _, _, name in _scan(value)]


def resolve_references(value: str, environ: Mapping[str, str], *, where: str) -> str:
    """Replace every ${VAR} in value with that environment variable's value.

    A $NAME without braces is literal text. An unset variable, or a malformed reference, is a
    ConfigError naming the variable and where (for example 'MCP server "docs" header
    Authorization').
    """
    try:
        references = _scan(value)
    except ValueError as problem:
        raise ConfigError(f"{where} {problem}") from None
    pieces: list[str] = []
    position = 0
    for start, end, name in references:
        resolved = environ.get(name)
        if resolved is None:
            raise ConfigError(
                f"environment variable {name} is not set, and {where} refers to it as ${{{name}}}"
            )
        pieces.append(value[position:start])
        pieces.append(resolved)
        position = end
    pieces.append(value[position:])
    return "".join(pieces)
