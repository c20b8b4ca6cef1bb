"""Asking a fisk application for its command model: ``APP --fisk-introspect``.

The document has to decode whole, so output past the cap is refused rather than truncated. Every
failure is one sentence naming ``application_path``, because that is what the operator changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fisk_ai.errors import FiskError
from fisk_ai.tools.environment import tool_environment
from fisk_ai.tools.fiskapp.execute import ChildProcess, exit_code_of, start_child
from fisk_ai.tools.fiskapp.model import ApplicationModel, CommandModel
from fisk_ai.tools.tags import DENY
from fisk_ai.tools.validation import json_kind
from fisk_ai.util import jsonx
from fisk_ai.util.durations import format_duration
from fisk_ai.util.sanitize import single_line

INTROSPECT_FLAG = "--fisk-introspect"
INTROSPECT_TIMEOUT = 30.0
INTROSPECT_OUTPUT_LIMIT = 16 * 1024 * 1024
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

_TAIL_BYTES = 2048
_TAIL_CHARS = 300


class IntrospectionError(FiskError):
    """The application at application_path could not describe itself."""


class _BoundedBuffer:
    """Collects output up to a limit, then records the overflow and stops the child."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.overflowed = False
        self.child: ChildProcess | None = None

    def write(self, chunk: bytes) -> None:
        if self.overflowed:
            return
        room = self.limit - len(self.data)
        if len(chunk) <= room:
            self.data += chunk
            return
        self.overflowed = True
        if self.child is not None:
            self.child.kill_group()


async def introspect(
    app_path: str,
    *,
    timeout: float = INTROSPECT_TIMEOUT,  # noqa: ASYNC109 - expiry kills the group and is reported
    work_dir: Path | None = None,
    output_limit: int = INTROSPECT_OUTPUT_LIMIT,
    extra_secret_names: Iterable[str] = (),
) -> ApplicationModel:
    """Run ``app_path --fisk-introspect`` and decode and check the model it prints.

    The child gets the scrubbed tool environment, a closed stdin and ``timeout`` seconds; its
    process group is killed when it overruns or prints more than ``output_limit`` bytes.
    """
    buffer = _BoundedBuffer(output_limit)
    try:
        child = await start_child(
            app_path,
            [INTROSPECT_FLAG],
            cwd=work_dir,
            env=tool_environment(extra_secret_names=extra_secret_names),
            sink=buffer.write,
        )
    except FileNotFoundError:
        raise IntrospectionError(
            f'application_path "{app_path}" was not found; set application_path to the path of '
            "a fisk application"
        ) from None
    except PermissionError:
        raise IntrospectionError(
            f'application_path "{app_path}" is not executable; make it executable or set '
            "application_path to a fisk application"
        ) from None
    except OSError as exc:
        raise IntrospectionError(
            f'application_path "{app_path}" could not be started: {exc.strerror or exc}'
        ) from None

    buffer.child = child
    if buffer.overflowed:
        child.kill_group()
    try:
        timed_out = await child.settle(timeout)
    except BaseException:
        await child.abandon()
        raise

    if timed_out:
        raise IntrospectionError(
            f'application_path "{app_path}" did not answer {INTROSPECT_FLAG} within '
            f"{_seconds_text(timeout)} and was stopped; check that it is a fisk application "
            "that does not wait for input"
        )
    if buffer.overflowed:
        raise IntrospectionError(
            f'application_path "{app_path}" printed more than {_size_text(output_limit)} for '
            f"{INTROSPECT_FLAG} and was stopped; a fisk application's model must be smaller"
        )
    returncode = child.process.returncode
    if returncode != 0:
        tail = single_line(bytes(buffer.data[-_TAIL_BYTES:]).decode("utf-8", "replace"))
        if len(tail) > _TAIL_CHARS:
            tail = "..." + tail[-_TAIL_CHARS:]
        status = (
            f"was killed by signal {-returncode}"
            if returncode is not None and returncode < 0
            else f"exited with status {exit_code_of(returncode)}"
        )
        said = f": {tail}" if tail else " without printing anything"
        raise IntrospectionError(
            f'application_path "{app_path}" {status} when asked for {INTROSPECT_FLAG}{said}'
        )
    return parse_application_model(bytes(buffer.data), app_path)


def parse_application_model(document: bytes, app_path: str) -> ApplicationModel:
    """Decode an introspection document and check every command that could become a tool."""
    if not document.strip():
        raise IntrospectionError(
            f'application_path "{app_path}" printed nothing for {INTROSPECT_FLAG}; '
            "check that it is a fisk application"
        )
    try:
        # A lone surrogate escape in help text becomes U+FFFD, so every later print can encode it.
        decoded = jsonx.parse(document)
    except jsonx.JsonError as exc:
        raise IntrospectionError(
            f'application_path "{app_path}" printed malformed JSON for {INTROSPECT_FLAG}: the '
            f"document {exc}; check that it is a fisk application"
        ) from None
    if not isinstance(decoded, dict):
        raise IntrospectionError(
            f'application_path "{app_path}" printed a JSON {json_kind(decoded)} rather than an '
            f"object for {INTROSPECT_FLAG}; check that it is a fisk application"
        )

    try:
        model = ApplicationModel.model_validate(decoded)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the document"
        raise IntrospectionError(
            f'application_path "{app_path}" printed a fisk model that does not decode at '
            f"{where}: {first['msg']}"
        ) from None

    check_application_model(model, app_path)
    return model


def check_application_model(model: ApplicationModel, app_path: str) -> None:
    """Refuse a model with a visible leaf command that could not become a tool.

    Every visible leaf needs a precomputed schema, which only fisk >= 0.9 emits. A leaf that is
    not denied also needs an object schema and a command path that makes a valid tool name.
    """
    for path, command in visible_leaves(model.commands):
        _check_leaf(app_path, path, command)


def visible_leaves(
    commands: Iterable[CommandModel], prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], CommandModel]]:
    """Every leaf command with its path, skipping hidden commands and all they contain.

    A command with subcommands only groups them; it is never a leaf itself.
    """
    for command in commands:
        if command.hidden:
            continue
        path = (*prefix, command.name)
        if command.is_leaf:
            yield path, command
        else:
            yield from visible_leaves(command.commands, path)


def _check_leaf(app_path: str, path: tuple[str, ...], command: CommandModel) -> None:
    display = " ".join(path)
    schema: Any = command.input_schema
    if schema is None:
        raise IntrospectionError(
            f'application_path "{app_path}" command "{display}" has no precomputed schema; '
            "fisk >= 0.9 is needed, so rebuild the application with a newer fisk"
        )
    if DENY in command.tags:
        # A denied command never reaches a model, so its shape cannot break a run.
        return
    if not isinstance(schema, dict):
        raise IntrospectionError(
            f'application_path "{app_path}" command "{display}" has a schema that is not a '
            "JSON object; rebuild the application with a newer fisk"
        )
    if schema.get("type") != "object":
        raise IntrospectionError(
            f'application_path "{app_path}" command "{display}" has a schema whose root type is '
            f'{json.dumps(schema.get("type"))} rather than "object"; a tool schema must describe '
            "an object"
        )
    tool_name = "_".join(path)
    if not TOOL_NAME_PATTERN.match(tool_name):
        raise IntrospectionError(
            f'application_path "{app_path}" command "{display}" would become the tool name '
            f'"{tool_name}", which is not a valid tool name (letters, digits, "_" and "-", at '
            "most 64 characters); rename or hide the command, or tag it ai:deny"
        )


def _seconds_text(seconds: float) -> str:
    return format_duration(timedelta(seconds=seconds))


def _size_text(size: int) -> str:
    mebibyte = 1024 * 1024
    if size % mebibyte == 0:
        return f"{size // mebibyte} MiB"
    return f"{size} bytes"
