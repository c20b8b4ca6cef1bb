"""Nothing configured is inert: every key the loader accepts has a witness.

The key paths are walked off the models themselves, so a new key without an entry in
key_witnesses.WITNESSES fails here, as does an entry for a key that is gone, a cited test that
does not exist, or a refusal that does not name its key. One file holding every key is then read
the way fisk serve reads it.
"""

from __future__ import annotations

import importlib
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from fisk_ai import config
from fisk_ai.config.models import MEMORY_OPTIONS, SESSIONS_OPTIONS
from tests.config.key_witnesses import WITNESSES, Effect, Gap, Refused

# The free-form blocks whose keys are decoded by the backend chosen beside them.
OPTION_MODELS: dict[str, tuple[type[BaseModel], ...]] = {
    "harness.memory.options": tuple(MEMORY_OPTIONS.values()),
    "harness.sessions.options": tuple(SESSIONS_OPTIONS.values()),
}


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The type under Annotated and Optional, and whether None was allowed."""
    optional = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
            optional = optional or len(members) < len(typing.get_args(annotation))
            if len(members) != 1:
                return annotation, optional
            annotation = members[0]
        else:
            return annotation, optional


def _is_block(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def key_paths(model: type[BaseModel] = config.Config, prefix: str = "") -> list[str]:
    """Every key a user can write, as a dotted path with ``[]`` for list items.

    A block that is always there (such as harness) is only a container, so it is left out and
    its keys are listed; a block whose presence is a switch (expose.agent.slack) and a list of
    blocks (mcp_clients) are keys of their own.
    """
    paths: list[str] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        annotation, optional = _unwrap(field.annotation)
        if typing.get_origin(annotation) is list:
            item, _ = _unwrap(typing.get_args(annotation)[0])
            paths.append(path)
            if _is_block(item):
                paths += key_paths(item, f"{path}[].")
        elif _is_block(annotation):
            if optional:
                paths.append(path)
            paths += key_paths(annotation, f"{path}.")
        elif path in OPTION_MODELS:
            paths.append(path)
            for options in OPTION_MODELS[path]:
                paths += [p for p in key_paths(options, f"{path}.") if p not in paths]
        else:
            assert (
                typing.get_origin(annotation) is not dict
                or _unwrap(typing.get_args(annotation)[1])[0] is str
            ), f"{path} holds keys this walk cannot see; add it to OPTION_MODELS"
            paths.append(path)
    return paths


def test_every_key_has_a_witness_and_every_witness_a_key() -> None:
    keys = key_paths()
    assert [key for key in keys if key not in WITNESSES] == []
    assert [key for key in WITNESSES if key not in keys] == []


def _test_function(citation: str) -> object:
    path, _, name = citation.partition("::")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    return getattr(module, name, None)


def test_each_cited_test_exists() -> None:
    effects = {key: witness for key, witness in WITNESSES.items() if isinstance(witness, Effect)}
    assert [key for key, witness in effects.items() if not witness.tests] == [], (
        "these keys cite no test"
    )
    missing = [
        f"{key}: {citation}"
        for key, witness in effects.items()
        for citation in witness.tests
        if not callable(_test_function(citation))
    ]
    assert missing == [], "these cited tests do not exist"


def test_no_key_lacks_a_test_of_its_effect() -> None:
    gaps = {key: witness.where for key, witness in WITNESSES.items() if isinstance(witness, Gap)}
    assert gaps == {}, "these keys have an effect no test proves yet"


def _writes(document: Any, path: str) -> bool:
    """Whether document writes the key at path (in some list item, for ``[]``)."""
    part, _, rest = path.partition(".")
    name = part.removesuffix("[]")
    if not isinstance(document, dict) or name not in document:
        return False
    value = document[name]
    if not rest:
        return True
    if part.endswith("[]"):
        return any(_writes(item, rest) for item in value)
    return _writes(value, rest)


def _without(document: dict[str, Any], path: str) -> dict[str, Any]:
    """A deep copy of document without the key at path (in every list item)."""
    *parents, last = path.split(".")

    def strip(node: Any, parts: list[str]) -> Any:
        if not parts:
            return {key: value for key, value in node.items() if key != last}
        part, *rest = parts
        name = part.removesuffix("[]")
        if name not in node:
            return node
        if part.endswith("[]"):
            return {**node, name: [strip(item, rest) for item in node[name]]}
        return {**node, name: strip(node[name], rest)}

    result: dict[str, Any] = strip(document, parents)
    return result


# Every key at a value other than its default. Two mcp_clients show both transports, since one
# entry may not hold both; memory and sessions use the jetstream backend, whose options are the
# larger set (the file backends' directory is loaded separately below).
EVERY_KEY: dict[str, Any] = {
    "identity": "inventory",
    "application_path": "bin/ops",
    "nats_context": "fleet",
    "system_prompt": "You keep the inventory.",
    "include": {"tools": ["^stock_"], "tags": ["team:inventory"]},
    "exclude": {"tools": ["^stock_purge$"], "tags": ["impact:destructive"]},
    "global_flags": ["region"],
    "remote_agents": [{"name": "billing", "alias": "bill"}],
    "remote_tools": [
        {
            "name": "catalog",
            "alias": "cat",
            "include": {"tools": ["^lookup"], "tags": ["read"]},
            "exclude": {"tools": ["^drop"], "tags": ["write"]},
        }
    ],
    "mcp_clients": [
        {
            "name": "files",
            "alias": "fs",
            "command": "mcp-files",
            "args": ["--root", "/srv"],
            "env": {"FILES_MODE": "ro"},
            "timeout": "10s",
            "include": {"tools": ["^read_"], "tags": ["read"]},
            "exclude": {"tools": ["^read_secret"], "tags": ["write"]},
        },
        {"name": "web", "url": "https://mcp.example.test/mcp", "headers": {"X-Team": "ops"}},
    ],
    "expose": {
        "agent": {
            "tools": {
                "include": {"tools": ["^stock_"], "tags": ["read"]},
                "exclude": {"tools": ["^stock_audit$"], "tags": ["slow"]},
            },
            "mcp": {
                "port": 8181,
                "address": "127.0.0.2",
                "instructions": "Count before you order.",
                "confirm_over_mcp": "never",
                "builtins": ["knowledge_search", "knowledge_enumerate"],
                "max_concurrent_tools": 3,
                "tool_timeout": "7s",
            },
            "a2a": {
                "serve_tools": True,
                "prompts": {"workers": 2, "elicit": True},
                "max_concurrent_tools": 3,
                "tool_timeout": "9s",
                "request_timeout": "45s",
            },
            "a2a_http": {
                "address": "0.0.0.0",
                "port": 8443,
                "public_url": "https://inventory.example.test/a2a/",
                "token_env": "INVENTORY_A2A_TOKEN",
                "plaintext_token": True,
            },
            "jobs": {
                "queue": "INVENTORY",
                "task_type": "inventory:run",
                "workers": 2,
                "nats_context": "queue",
                "max_payload": 4096,
            },
            "slack": {
                "workers": 2,
                "context_lines": 4,
                "no_progress": True,
                "answer_grace": "5s",
                "max_waiting": 3,
                "max_coalesced": 2,
            },
        }
    },
    "harness": {
        "human_in_the_loop": {"enabled": True},
        "confirm_tags": ["impact:rw"],
        "no_tui": True,
        "no_bell": True,
        "tool_timeout": "90s",
        "memory": {
            "enabled": True,
            "backend": "jetstream",
            "no_index": True,
            "read_only": True,
            "options": {
                "bucket": "INVENTORY_MEMORY",
                "prefix": "shared",
                "no_require_read_before_update": True,
            },
        },
        "knowledge": {
            "enabled": True,
            "paths": ["docs"],
            "directory": "index",
            "top_k": 8,
            "max_injected_tokens": 3000,
            "embeddings": {
                "provider": "openai",
                "base_url": "https://embeddings.example.test/v1",
                "model": "text-embedding-3-small",
                "api_key_env": "EMBEDDINGS_KEY",
                "timeout": "12s",
                "query_prefix": "query: ",
                "document_prefix": "passage: ",
            },
        },
        "sessions": {"backend": "jetstream", "options": {"stream": "INVENTORY_SESSIONS"}},
        "pii": {"mode": "reject"},
    },
    "llm": {
        "model": "claude-sonnet-4-5",
        "provider": "replay",
        "budget": {
            "max_tokens": 90000,
            "max_output_tokens": 4096,
            "max_iterations": 12,
            "call_timeout": "60s",
        },
        "thinking": {"enabled": True},
        "reasoning_effort": "high",
        "no_prompt_cache": True,
        "no_tool_search": True,
    },
    "telemetry": {
        "enabled": True,
        "endpoint": "http://127.0.0.1:4318",
        "service_name": "inventory-agent",
        "sample_ratio": 0.5,
        "no_metrics": True,
        "capture": {"enabled": True, "messages": "full", "max_bytes": 2048},
    },
}
FILE_BACKEND_KEYS = {
    "harness.memory.options.directory": {"harness": {"memory": {"options": {"directory": "m"}}}},
    "harness.sessions.options.directory": {
        "harness": {"sessions": {"options": {"directory": "s"}}}
    },
}


def _write(tmp_path: Path, document: dict[str, Any]) -> Path:
    import json

    path = tmp_path / "agent.yaml"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_the_every_key_file_writes_every_key() -> None:
    unwritten = [key for key in key_paths() if not _writes(EVERY_KEY, key)]
    assert unwritten == sorted(FILE_BACKEND_KEYS)


def test_a_file_with_every_key_is_refused_only_by_a_refused_key(tmp_path: Path) -> None:
    with pytest.raises(config.ConfigError) as refusal:
        config.load(_write(tmp_path, EVERY_KEY), config.Mode.SERVE)
    assert refusal.value.key is not None
    named = refusal.value.key.replace("[0]", "[]")
    witness = WITNESSES.get(named)
    assert isinstance(witness, Refused) and witness.fatal, str(refusal.value)
    assert witness.says in str(refusal.value)


def test_without_its_fatal_keys_every_key_loads_and_each_warned_key_is_named(
    tmp_path: Path,
) -> None:
    document = EVERY_KEY
    for key, witness in WITNESSES.items():
        if isinstance(witness, Refused) and witness.fatal:
            document = _without(document, key)

    cfg = config.load(_write(tmp_path, document), config.Mode.SERVE)

    for key, witness in WITNESSES.items():
        if isinstance(witness, Refused) and not witness.fatal:
            named = (witness.names or key).replace("[]", "[0]")
            said = [w for w in cfg.warnings if f'"{named}"' in w and witness.says in w]
            assert said, f"no warning names {named}: {cfg.warnings}"


# The one key the file holds at its default: provider: local forbids the endpoint keys beside it.
AT_DEFAULT = {"harness.knowledge.embeddings.provider"}


def test_every_key_in_the_file_is_away_from_its_default(tmp_path: Path) -> None:
    document = EVERY_KEY
    for key, witness in WITNESSES.items():
        if isinstance(witness, Refused) and witness.fatal:
            document = _without(document, key)
    cfg = config.load(_write(tmp_path, document), config.Mode.SERVE)

    at_default = []
    for key in key_paths():
        if "[]" in key or ".options" in key or key in FILE_BACKEND_KEYS:
            continue  # list items and backend options have no single default to compare with
        owner: Any = cfg
        *parents, name = key.split(".")
        for part in parents:
            owner = getattr(owner, part)
        field = type(owner).model_fields[name]
        if getattr(owner, name) == field.get_default(call_default_factory=True):
            at_default.append(key)
    assert sorted(at_default) == sorted(AT_DEFAULT)


@pytest.mark.parametrize(
    "key", [key for key, witness in WITNESSES.items() if isinstance(witness, Refused)]
)
def test_each_refused_key_is_refused_or_warned_about_by_name(key: str, tmp_path: Path) -> None:
    witness = WITNESSES[key]
    assert isinstance(witness, Refused)
    named = (witness.names or key).replace("[]", "[0]")
    document: dict[str, Any] = {
        "identity": "inventory",
        "system_prompt": "You keep the inventory.",
        "llm": {"model": "claude-sonnet-4-5"},
    }
    top = key.split(".", maxsplit=1)[0].removesuffix("[]")
    document[top] = EVERY_KEY[top]
    if witness.fatal:
        with pytest.raises(config.ConfigError) as refusal:
            config.load(_write(tmp_path, document), config.Mode.LENIENT)
        assert f'"{named}"' in str(refusal.value) and witness.says in str(refusal.value)
    else:
        for other, other_witness in WITNESSES.items():
            if isinstance(other_witness, Refused) and other_witness.fatal:
                document = _without(document, other) if other.startswith(top) else document
        cfg = config.load(_write(tmp_path, document), config.Mode.LENIENT)
        assert any(f'"{named}"' in w and witness.says in w for w in cfg.warnings), cfg.warnings


@pytest.mark.parametrize("key", sorted(FILE_BACKEND_KEYS))
def test_the_file_backends_directory_loads(key: str, tmp_path: Path) -> None:
    cfg = config.load(_write(tmp_path, FILE_BACKEND_KEYS[key]), config.Mode.LENIENT)
    memory = key.startswith("harness.memory")
    options = (cfg.harness.memory if memory else cfg.harness.sessions).backend_options
    assert isinstance(options, config.FileMemoryOptions | config.FileSessionsOptions)
    assert options.directory == ("m" if memory else "s")
