"""The one way agent.yaml is read: strict unmarshal, prepare, validate for a mode.

Every command goes through load (or parse), so a bad entry fails the same way whichever command
reads it. Each error is one sentence naming the dotted key and, when the file holds it, the line.
"""

from __future__ import annotations

import enum
import os
import types
import typing
from collections.abc import Iterable, Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from fisk_ai.config.errors import ConfigError
from fisk_ai.config.models import (
    DEFAULT_IDENTITY,
    IDENTITY_PATTERN,
    MEMORY_OPTIONS,
    SESSIONS_OPTIONS,
    A2aHttpExposure,
    Config,
    FileMemoryOptions,
    FileSessionsOptions,
    JetStreamMemoryOptions,
    McpClient,
    RemoteToolHost,
)
from fisk_ai.config.references import reference_problem
from fisk_ai.config.yamltree import KeyPath, describe_path, read_yaml

__all__ = [
    "Mode",
    "decode_options",
    "is_loopback_address",
    "load",
    "parse",
    "require_something_to_serve",
]

M = TypeVar("M", bound=BaseModel)


class Mode(enum.Enum):
    """What the calling command needs from the file beyond the checks that always run."""

    AGENT = "agent"  # fisk run
    SERVE = "serve"  # fisk serve
    LENIENT = "lenient"  # fisk mcp, info, knowledge, discover, session --config


def load(path: str | os.PathLike[str], mode: Mode) -> Config:
    """Read, prepare and validate the agent configuration at path for mode."""
    source = os.fspath(path)
    try:
        raw = Path(source).read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            f"the agent configuration {source} does not exist; name the right file with --config"
        ) from None
    except IsADirectoryError:
        raise ConfigError(
            f"{source} is a directory, not an agent configuration; name the file with --config"
        ) from None
    except OSError as error:
        raise ConfigError(
            f"cannot read the agent configuration {source} ({error.strerror}); "
            "name a readable file with --config"
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            f"{source} is not UTF-8 text; name the agent configuration with --config"
        ) from None
    return parse(text, mode, source=source, base_dir=Path(source).absolute().parent)


def parse(
    text: str, mode: Mode, *, source: str = "agent.yaml", base_dir: Path | None = None
) -> Config:
    """Parse agent.yaml text (YAML or JSON) through the three stages.

    base_dir is where a relative application_path resolves; the working directory when None.
    """
    document = read_yaml(text, source=source)
    if document.data is None:
        raise ConfigError(
            f"{source} holds no settings; it needs at least llm.model and system_prompt"
        )
    if not isinstance(document.data, dict):
        raise ConfigError(
            f"{source} line 1: the file must be a mapping of settings, "
            f"not {_describe(document.data)}",
            line=1,
        )
    lines = document.lines
    decoded = _decode(Config, document.data, (), lines, source, texts=document.texts)
    prepared = _prepare(
        decoded, base_dir if base_dir is not None else Path.cwd(), lines, source, document.texts
    )
    _validate(prepared, mode, lines, source)
    return prepared


def decode_options(model: type[M], raw: Mapping[str, Any] | None, *, path: str) -> M:
    """Decode a backend's options block strictly; an unknown key is an error naming path.key."""
    prefix: KeyPath = tuple(path.split(".")) if path else ()
    return _decode(model, dict(raw or {}), prefix, {}, None)


def _decode(
    model: type[M],
    data: dict[str, Any],
    prefix: KeyPath,
    lines: Mapping[KeyPath, int],
    source: str | None,
    *,
    owner: str = "",
    texts: Mapping[KeyPath, str] | None = None,
) -> M:
    """Validate data as model; owner names who reads the block (e.g. "the file memory backend").

    texts holds the written text of scalars YAML read as booleans or numbers (see read_yaml).
    """
    data = _as_written(model, data, prefix, texts or {})
    try:
        return model.model_validate(data)
    except ValidationError as failure:
        raise _translate(
            failure, model=model, prefix=prefix, lines=lines, source=source, owner=owner
        ) from None
    except (RecursionError, OverflowError) as failure:
        # pydantic lets through what a validator raises that is not a ValueError: Python's
        # regular expression compiler raises these for a pattern nested or repeated too far.
        where = f"{source} holds" if source else "the settings hold"
        raise ConfigError(
            f"{where} a value too large or nested too deeply to read ({failure}); look for an "
            "extreme regular expression under include or exclude"
        ) from None


def _is_text(annotation: Any) -> bool:
    """Whether a field of this type is written as text in agent.yaml (durations and closed
    vocabularies are text too)."""
    return annotation is str or (
        isinstance(annotation, type) and issubclass(annotation, enum.Enum | timedelta)
    )


def _as_written(annotation: Any, value: Any, path: KeyPath, texts: Mapping[KeyPath, str]) -> Any:
    """value with every boolean or number that sits where its field is text replaced by the text
    it was written as: Go's loader reads a scalar by the type of its field, so "mode: off" or
    "system_prompt: 42" is text there, and must be here."""
    target = _unwrap(annotation)
    if isinstance(value, bool | int | float):
        if not _is_text(target):
            return value
        if isinstance(value, bool):
            return texts.get(path, "true" if value else "false")
        return texts.get(path, str(value))
    origin = typing.get_origin(target)
    if isinstance(value, list) and origin is list:
        (item,) = typing.get_args(target)
        return [
            _as_written(item, entry, (*path, index), texts) for index, entry in enumerate(value)
        ]
    if not isinstance(value, dict):
        return value
    if origin is dict:
        inner = typing.get_args(target)[1]
        return {key: _as_written(inner, entry, (*path, key), texts) for key, entry in value.items()}
    if isinstance(target, type) and issubclass(target, BaseModel):
        fields = target.model_fields
        return {
            key: _as_written(fields[key].annotation, entry, (*path, key), texts)
            if key in fields
            else entry
            for key, entry in value.items()
        }
    return value


def _line_of(path: KeyPath, lines: Mapping[KeyPath, int]) -> int | None:
    for length in range(len(path), -1, -1):
        line = lines.get(path[:length])
        if line is not None:
            return line
    return None


def _error(
    detail: str,
    *,
    path: KeyPath,
    lines: Mapping[KeyPath, int],
    source: str | None,
    key: str | None = None,
) -> ConfigError:
    """An error on the line of path (or its nearest written parent); key defaults to path."""
    line = _line_of(path, lines) if lines else None
    if source is None:
        message = detail
    elif line is None:
        message = f"{source}: {detail}"
    else:
        message = f"{source} line {line}: {detail}"
    return ConfigError(message, key=key or describe_path(path) or None, line=line)


_EXPECTED = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping of keys",
    "model_type": "a mapping of keys",
    "model_attributes_type": "a mapping of keys",
    "time_delta_type": 'a duration such as "30s"',
}


def _describe(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'the text "{shown}"'
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, bytes):
        return "binary data"
    if isinstance(value, date):
        return f"the date {value} (quote it to make it text)"
    return f"a {type(value).__name__}"


def _translate(
    failure: ValidationError,
    *,
    model: type[BaseModel],
    prefix: KeyPath,
    lines: Mapping[KeyPath, int],
    source: str | None,
    owner: str,
) -> ConfigError:
    """The first problem in the file, as one sentence."""
    candidates: list[tuple[int, KeyPath, dict[str, Any]]] = []
    for details in failure.errors():
        location = tuple(part for part in details["loc"] if part != "[key]")
        path = prefix + location
        line = _line_of(path, lines) if lines else None
        candidates.append((line or 0, path, dict(details)))
    # A missing key is often a misspelled one, and the misspelling is the more useful report.
    _, path, entry = min(
        candidates, key=lambda candidate: (candidate[2]["type"] == "missing", candidate[0])
    )
    kind = entry["type"]
    shown = describe_path(path)
    if kind == "extra_forbidden":
        import difflib  # only an error pays for the import

        detail = f'unknown key "{shown}"' + (f" for {owner}" if owner else "")
        location = path[len(prefix) :]
        known = _keys_at(model, location[:-1])
        close = difflib.get_close_matches(str(location[-1]), known, n=1, cutoff=0.6)
        if close:
            detail += f' (did you mean "{close[0]}"?)'
    elif kind == "missing":
        detail = f'"{shown}" is required' + (f" by {owner}" if owner else "")
    elif kind == "fisk":
        detail = f'"{shown}" {entry["ctx"]["detail"]}'
    elif kind in _EXPECTED:
        detail = f'"{shown}" must be {_EXPECTED[kind]}, not {_describe(entry.get("input"))}'
    else:
        reason = str(entry.get("msg", "is not valid")).splitlines()[0]
        detail = f'"{shown}" is not valid: {reason}'
    return _error(detail, path=path, lines=lines, source=source)


def _unwrap(annotation: Any) -> Any:
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


def _keys_at(model: type[BaseModel], location: KeyPath) -> list[str]:
    """The keys the block at location (relative to model) accepts, for did-you-mean hints."""
    current: Any = model
    for part in location:
        current = _unwrap(current)
        origin = typing.get_origin(current)
        if isinstance(part, int) and origin is list:
            current = typing.get_args(current)[0]
        elif origin is dict:
            current = typing.get_args(current)[1]
        elif isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return []
            current = field.annotation
        else:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _derive_identity(application_path: str) -> str:
    """The application's whole base name, as Go's filepath.Base takes it; validation refuses one
    that is not a usable identity (such as "my.agent") rather than rewriting it."""
    if not application_path:
        return DEFAULT_IDENTITY
    trimmed = application_path.rstrip("/")
    if not trimmed:
        return "/"
    return trimmed.rsplit("/", 1)[-1]


def _resolve_application(application_path: str, base_dir: Path) -> str:
    if not application_path:
        return ""
    if application_path.startswith("~"):
        return str(Path(application_path).expanduser())
    if Path(application_path).is_absolute() or "/" not in application_path:
        return application_path
    return os.path.normpath(base_dir / application_path)


def _state_directory() -> str:
    state_home = os.environ.get("XDG_STATE_HOME", "")
    # The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
    if state_home and Path(state_home).is_absolute():
        return str(Path(state_home) / "fisk-ai" / "runs")
    return str(Path.home() / ".local" / "state" / "fisk-ai" / "runs")


def _normalized_list(values: Iterable[str], *, strip_dashes: bool) -> list[str]:
    """The entries trimmed, blank ones dropped and repeats removed, first-seen order kept, as Go
    normalizes them (a blank entry is a harmless leftover of editing, not a mistake to refuse)."""
    seen: dict[str, None] = {}
    for value in values:
        cleaned = value.strip()
        if strip_dashes:
            cleaned = cleaned.lstrip("-")
        if cleaned:
            seen.setdefault(cleaned, None)
    return list(seen)


def _prepare(
    config: Config,
    base_dir: Path,
    lines: Mapping[KeyPath, int],
    source: str,
    texts: Mapping[KeyPath, str],
) -> Config:
    """Derive the identity, apply the defaults that depend on other keys, resolve paths."""
    named = bool(config.identity)
    identity = config.identity or _derive_identity(config.application_path)
    warnings: list[str] = []

    global_flags = _normalized_list(config.global_flags, strip_dashes=True)
    confirm_tags = _normalized_list(config.harness.confirm_tags, strip_dashes=False)

    remote_tools: list[RemoteToolHost] = []
    for index, host in enumerate(config.remote_tools):
        if host.include.tags:
            path = ("remote_tools", index, "include", "tags")
            line = _line_of(path, lines)
            warnings.append(
                f'{source} line {line}: "{describe_path(path)}" is ignored, since a remote '
                "agent's tool list carries no tags"
            )
        remote_tools.append(host.model_copy(update={"alias": host.alias or host.name}))
    if config.remote_agents:
        line = _line_of(("remote_agents",), lines)
        # Accepted as the Go fisk-ai accepts it, but said: a key that silently does nothing
        # reads as a feature that is on.
        warnings.append(
            f'{source} line {line}: "remote_agents" does nothing, here as in the Go fisk-ai; '
            "import another agent's served tools with remote_tools instead"
        )
    mcp_clients = [
        client.model_copy(update={"alias": client.alias or client.name})
        for client in config.mcp_clients
    ]
    for index, client in enumerate(config.mcp_clients):
        if client.include.tags:
            path = ("mcp_clients", index, "include", "tags")
            warnings.append(
                f'{source} line {_line_of(path, lines)}: "{describe_path(path)}" is ignored, '
                "since an MCP server's tool list carries no tags"
            )

    memory = config.harness.memory
    memory_options = _decode(
        MEMORY_OPTIONS[memory.backend],
        memory.options,
        ("harness", "memory", "options"),
        lines,
        source,
        owner=f"the {memory.backend.value} memory backend",
        texts=texts,
    )
    if isinstance(memory_options, FileMemoryOptions):
        if not memory_options.directory:
            memory_options = memory_options.model_copy(update={"directory": f"memory/{identity}"})
    elif isinstance(memory_options, JetStreamMemoryOptions) and memory_options.prefix is None:
        memory_options = memory_options.model_copy(update={"prefix": identity})
    memory = memory.model_copy()
    memory._backend_options = memory_options

    sessions = config.harness.sessions
    sessions_options = _decode(
        SESSIONS_OPTIONS[sessions.backend],
        sessions.options,
        ("harness", "sessions", "options"),
        lines,
        source,
        owner=f"the {sessions.backend.value} sessions backend",
        texts=texts,
    )
    if isinstance(sessions_options, FileSessionsOptions) and not sessions_options.directory:
        sessions_options = sessions_options.model_copy(update={"directory": _state_directory()})
    sessions = sessions.model_copy()
    sessions._backend_options = sessions_options

    knowledge = config.harness.knowledge
    if not knowledge.directory:
        knowledge = knowledge.model_copy(update={"directory": f"knowledge/{identity}"})

    harness = config.harness.model_copy(
        update={
            "confirm_tags": confirm_tags,
            "memory": memory,
            "sessions": sessions,
            "knowledge": knowledge,
        }
    )

    agent = config.expose.agent
    if agent.jobs is not None and not agent.jobs.nats_context:
        jobs = agent.jobs.model_copy(update={"nats_context": config.nats_context})
        agent = agent.model_copy(update={"jobs": jobs})
    expose = config.expose.model_copy(update={"agent": agent})

    prepared = config.model_copy(
        update={
            "identity": identity,
            "application_path": _resolve_application(config.application_path, base_dir),
            "global_flags": global_flags,
            "remote_tools": remote_tools,
            "mcp_clients": mcp_clients,
            "harness": harness,
            "expose": expose,
        }
    )
    prepared._source = source
    prepared._base_dir = base_dir
    prepared._identity_named = named
    prepared._warnings = tuple(warnings)
    return prepared


def _validate(config: Config, mode: Mode, lines: Mapping[KeyPath, int], source: str) -> None:
    """The checks every command runs, then those the mode's command needs."""

    def fail(detail: str, *path: str | int, key: str | None = None) -> ConfigError:
        return _error(detail, path=path, lines=lines, source=source, key=key)

    if config.global_flags and not config.application_path:
        raise fail(
            '"global_flags" needs application_path, the application whose flags they are',
            "global_flags",
        )
    for index, host in enumerate(config.remote_tools):
        if host.exclude.tags:
            raise fail(
                f'"remote_tools[{index}].exclude.tags" cannot be used, since a remote agent\'s '
                "tool list carries no tags; exclude its tools by name instead",
                "remote_tools",
                index,
                "exclude",
                "tags",
            )
    _check_derived_identity(config, fail)
    _check_sample_ratio(config, fail)
    _check_mcp_clients(config.mcp_clients, fail)
    mcp = config.expose.agent.mcp
    if mcp is not None and mcp.builtins and not config.harness.knowledge.enabled:
        raise fail(
            '"expose.agent.mcp.builtins" serves knowledge tools, so it needs '
            "harness.knowledge.enabled: true",
            "expose",
            "agent",
            "mcp",
            "builtins",
        )

    if mode is Mode.AGENT:
        _validate_agent(config, fail)
    elif mode is Mode.SERVE:
        _validate_serve(config, fail)


class _Fail(typing.Protocol):
    def __call__(self, detail: str, *path: str | int, key: str | None = None) -> ConfigError: ...


def _check_derived_identity(config: Config, fail: _Fail) -> None:
    """An identity taken from application_path must be usable as one, as a written one must."""
    if config.identity_named or IDENTITY_PATTERN.fullmatch(config.identity):
        return
    raise fail(
        f'"identity" is derived from application_path as "{config.identity}", which is not a '
        'valid identity: it may hold only letters, digits, "_" and "-"; set identity to such a '
        "name",
        "application_path",
        key="identity",
    )


def _check_sample_ratio(config: Config, fail: _Fail) -> None:
    """telemetry.sample_ratio is checked where telemetry would start, as Go checks it when it
    starts the exporter: with telemetry off the value is never read, so it cannot stop a run."""
    ratio = config.telemetry.sample_ratio
    if config.telemetry.enabled and ratio is not None and not 0.0 <= ratio <= 1.0:
        raise fail(
            f'"telemetry.sample_ratio" must be between 0 and 1, not {ratio}',
            "telemetry",
            "sample_ratio",
        )


def _check_mcp_clients(clients: list[McpClient], fail: _Fail) -> None:
    names: dict[str, int] = {}
    aliases: dict[str, int] = {}
    for index, client in enumerate(clients):
        here = f"mcp_clients[{index}]"
        if client.command and client.url:
            raise fail(
                f'"{here}" sets both command and url; keep the one transport it uses',
                "mcp_clients",
                index,
            )
        if not client.command and not client.url:
            raise fail(
                f'"{here}" needs command (a server to start) or url (a server to reach)',
                "mcp_clients",
                index,
            )
        if client.exclude.tags:
            raise fail(
                f'"{here}.exclude.tags" cannot be used, since an MCP server\'s tool list '
                "carries no tags; exclude its tools by name instead",
                "mcp_clients",
                index,
                "exclude",
                "tags",
            )
        if client.url:
            problem = reference_problem(client.url)
            if problem:
                raise fail(f'"{here}.url" {problem}', "mcp_clients", index, "url")
            if not client.url.startswith(("http://", "https://")):
                raise fail(
                    f'"{here}.url" must be an http:// or https:// address',
                    "mcp_clients",
                    index,
                    "url",
                )
        for block, values in (("env", client.env), ("headers", client.headers)):
            for key, value in values.items():
                problem = reference_problem(value)
                if problem:
                    raise fail(
                        f'"{here}.{block}.{key}" {problem}', "mcp_clients", index, block, key
                    )
        if client.name in names:
            raise fail(
                f'"{here}.name" repeats "{client.name}", already the name of '
                f"mcp_clients[{names[client.name]}]",
                "mcp_clients",
                index,
                "name",
            )
        names[client.name] = index
        if client.alias in aliases:
            raise fail(
                f'"{here}" uses the alias "{client.alias}", which already prefixes the tools '
                f"of mcp_clients[{aliases[client.alias]}]; give one of them another alias",
                "mcp_clients",
                index,
            )
        aliases[client.alias] = index


def _validate_agent(config: Config, fail: _Fail) -> None:
    if config.remote_tools and not config.nats_context:
        raise fail(
            '"nats_context" is required by remote_tools, which reach other agents over NATS',
            "remote_tools",
            key="nats_context",
        )
    agent = config.expose.agent
    # An MCP-only agent runs no loop of its own, so it needs no prompt; a jobs intake or a
    # prompts endpoint beside the mcp block does run it, as Go decides.
    runs_loop = (
        agent.mcp is None
        or agent.jobs is not None
        or (agent.a2a is not None and agent.a2a.prompts is not None)
    )
    if runs_loop and not config.system_prompt.strip():
        raise fail(
            '"system_prompt" is required by fisk run; set the instructions the agent follows',
            "system_prompt",
        )
    if agent.jobs is not None and not agent.jobs.nats_context:
        raise fail(
            '"nats_context" is required by expose.agent.jobs, which reaches its work queue over '
            "NATS; set it at the top level or under the block",
            "expose",
            "agent",
            "jobs",
            key="nats_context",
        )
    if not config.llm.model:
        raise fail(
            '"llm.model" is required by fisk run; set the model the agent uses', "llm", "model"
        )


def _validate_serve(config: Config, fail: _Fail) -> None:
    agent = config.expose.agent
    a2a = agent.a2a
    serve_tools = a2a is not None and a2a.serve_tools
    prompts = a2a is not None and a2a.prompts is not None
    # request_timeout bounds what this agent asks of peers, so a block setting it enables no
    # endpoint and is still meaningful; Go accepts such a block whatever else it holds.
    if (
        a2a is not None
        and not serve_tools
        and not prompts
        and "request_timeout" not in a2a.model_fields_set
    ):
        raise fail(
            '"expose.agent.a2a" enables nothing; set serve_tools: true or a prompts block, '
            "or set request_timeout to bound the requests this agent sends",
            "expose",
            "agent",
            "a2a",
        )
    if not _serves_anything(config):
        # Go's parser accepts a file enabling no endpoint and leaves the refusal to the serve
        # command (require_something_to_serve), whose message names the blocks that fix it.
        return
    if not config.identity_named:
        raise fail(
            '"identity" is required by fisk serve, since a derived name is shared by every '
            "agent built from the same application",
            "identity",
        )
    if serve_tools:
        _validate_serve_tools(config, fail)
    if agent.a2a_http is not None:
        _validate_a2a_http(agent.a2a_http, prompts=prompts, fail=fail)
    for endpoint, path in _agent_loop_endpoints(config, fail):
        if not config.system_prompt.strip():
            raise fail(
                f'"system_prompt" is required by {endpoint}, which runs the agent',
                *path,
                key="system_prompt",
            )
        if not config.llm.model:
            raise fail(
                f'"llm.model" is required by {endpoint}, which runs the agent',
                *path,
                key="llm.model",
            )


def _serves_anything(config: Config) -> bool:
    agent = config.expose.agent
    a2a = agent.a2a
    return (
        (a2a is not None and (a2a.serve_tools or a2a.prompts is not None))
        or agent.jobs is not None
        or agent.slack is not None
    )


def require_something_to_serve(config: Config) -> None:
    """Refuse, for fisk serve, a configuration that enables no endpoint.

    The parser accepts one (as Go's does), so fisk info and the other commands can read it.
    """
    if not _serves_anything(config):
        raise ConfigError(
            f"{config.source}: fisk serve has nothing to serve; enable "
            "expose.agent.a2a.serve_tools, expose.agent.a2a.prompts, expose.agent.jobs or "
            "expose.agent.slack",
            key="expose.agent",
        )


def is_loopback_address(address: str) -> bool:
    """Whether a listen address reaches only this machine."""
    import ipaddress

    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _validate_a2a_http(http: A2aHttpExposure, *, prompts: bool, fail: _Fail) -> None:
    from urllib.parse import urlsplit

    path = ("expose", "agent", "a2a_http")
    if not prompts:
        raise fail(
            '"expose.agent.a2a_http" needs expose.agent.a2a.prompts, since every message it '
            "takes is a prompt to that channel; add a prompts block",
            *path,
        )
    public = urlsplit(http.public_url) if http.public_url else None
    if public is not None and (public.scheme not in {"http", "https"} or not public.hostname):
        raise fail(
            '"expose.agent.a2a_http.public_url" must be an http or https URL with a host',
            *path,
            "public_url",
        )
    if http.plaintext_token and not http.token_env:
        raise fail(
            '"expose.agent.a2a_http.plaintext_token" allows a bearer token over plain HTTP, '
            "so it needs token_env",
            *path,
            "plaintext_token",
        )
    behind_tls = public is not None and public.scheme == "https"
    if (
        http.token_env
        and not is_loopback_address(http.address)
        and not behind_tls
        and not http.plaintext_token
    ):
        raise fail(
            '"expose.agent.a2a_http.token_env" would send the bearer token in clear text to '
            f"{http.address}; put TLS in front and set public_url to its https address, or "
            "set plaintext_token: true",
            *path,
            "token_env",
        )


def _validate_serve_tools(config: Config, fail: _Fail) -> None:
    if not config.application_path:
        raise fail(
            '"application_path" is required by expose.agent.a2a.serve_tools, since only the '
            "application's commands are served",
            "expose",
            "agent",
            "a2a",
            "serve_tools",
            key="application_path",
        )
    if not config.nats_context:
        raise fail(
            '"nats_context" is required by expose.agent.a2a.serve_tools',
            "expose",
            "agent",
            "a2a",
            "serve_tools",
            key="nats_context",
        )


def _agent_loop_endpoints(config: Config, fail: _Fail) -> list[tuple[str, tuple[str, ...]]]:
    """The enabled serve endpoints that run the agent loop, each with its key path, after
    checking that each can reach NATS."""
    agent = config.expose.agent
    endpoints: list[tuple[str, tuple[str, ...]]] = []
    if agent.a2a is not None and agent.a2a.prompts is not None:
        if not config.nats_context:
            raise fail(
                '"nats_context" is required by expose.agent.a2a.prompts',
                "expose",
                "agent",
                "a2a",
                "prompts",
                key="nats_context",
            )
        endpoints.append(("expose.agent.a2a.prompts", ("expose", "agent", "a2a", "prompts")))
    if agent.jobs is not None:
        if not agent.jobs.nats_context:
            raise fail(
                '"expose.agent.jobs.nats_context" (or the top-level nats_context) is required '
                "to reach the work queue",
                "expose",
                "agent",
                "jobs",
                key="expose.agent.jobs.nats_context",
            )
        endpoints.append(("expose.agent.jobs", ("expose", "agent", "jobs")))
    if agent.slack is not None:
        endpoints.append(("expose.agent.slack", ("expose", "agent", "slack")))
    return endpoints
