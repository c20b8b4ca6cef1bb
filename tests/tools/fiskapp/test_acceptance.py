"""The behaviours an operator relies on, through a real fake application subprocess."""

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.telemetry.credentials import OTLP_CREDENTIAL_ENV_NAMES
from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.fiskapp.execute import TRUNCATION_MARKER
from fisk_ai.tools.fiskapp.introspect import introspect
from fisk_ai.tools.fiskapp.loader import LoadedApplication, load_application
from fisk_ai.tools.fiskapp.tool import FiskCommandTool
from fisk_ai.tools.toolset import ToolCollisionError, ToolSet, ToolSource
from tests.fakes.fiskapp import (
    application,
    command,
    hangs,
    kill_quietly,
    output_pattern,
    prints_bytes,
    sample_model,
    wait_for_exit,
    write_fake_app,
)


async def load_sample(tmp_path: Path, **options: Any) -> LoadedApplication:
    app = write_fake_app(tmp_path, sample_model())
    return load_application(await introspect(str(app)), str(app), **options)


def by_name(loaded: LoadedApplication) -> dict[str, FiskCommandTool]:
    return {tool.name: tool for tool in loaded.tools}


async def test_denied_and_hidden_commands_never_become_tools(tmp_path: Path) -> None:
    tools = by_name(await load_sample(tmp_path))

    assert sorted(tools) == ["cache_purge", "status", "stream_ls", "stream_rm"]


async def test_nested_confirm_tagged_command_is_gated_by_ai_confirm(tmp_path: Path) -> None:
    stream_rm = by_name(await load_sample(tmp_path))["stream_rm"]

    assert stream_rm.confirm_trigger(["impact:rw"]) == "ai:confirm"


async def test_context_is_listed_and_merged_when_allowlisted(tmp_path: Path) -> None:
    plain = await load_sample(tmp_path)
    allowed = await load_sample(tmp_path, global_flags=["context"])

    assert [(g.name, g.exposed) for g in plain.global_flags] == [("context", False)]
    assert [(g.name, g.exposed) for g in allowed.global_flags] == [("context", True)]
    assert "context" not in by_name(plain)["stream_rm"].input_schema["properties"]
    assert "context" in by_name(allowed)["stream_rm"].input_schema["properties"]


async def test_arguments_reach_the_application_as_fisk_argv(tmp_path: Path) -> None:
    stream_rm = by_name(await load_sample(tmp_path, global_flags=["context"]))["stream_rm"]

    outcome = await stream_rm.execute(
        '{"stream": "ORDERS", "force": true, "context": "prod"}', ExecDeps()
    )

    assert json.loads(outcome.output)["argv"] == [
        "stream",
        "rm",
        "--context=prod",
        "--force",
        "--",
        "ORDERS",
    ]
    assert outcome.exec is not None
    assert outcome.exec.command == "stream rm --context=prod --force -- ORDERS"


async def test_the_command_sees_llmformat_and_no_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        *sorted(OTLP_CREDENTIAL_ENV_NAMES),
    ]
    for name in secrets:
        monkeypatch.setenv(name, "secret-value")
    monkeypatch.setenv("FISK_TEST_ORDINARY", "kept")
    status = by_name(await load_sample(tmp_path))["status"]

    outcome = await status.execute("", ExecDeps())

    environment = json.loads(outcome.output)["env"]
    assert environment["LLMFORMAT"] == "1"
    assert environment["FISK_TEST_ORDINARY"] == "kept"
    assert [name for name in secrets if name in environment] == []
    assert "secret-value" not in outcome.output


async def test_large_output_becomes_a_head_and_tail_envelope(tmp_path: Path) -> None:
    leaf = command("spew", action=prints_bytes(200 * 1024))
    app = write_fake_app(tmp_path, application(commands=[leaf]))
    spew = load_application(await introspect(str(app)), str(app)).tools[0]

    outcome = await spew.execute("{}", ExecDeps())

    envelope = json.loads(outcome.model_content)
    expected = output_pattern(200 * 1024)
    assert envelope["truncated"] is True
    assert envelope["output"] == expected[:32768] + TRUNCATION_MARKER + expected[-32768:]
    assert len(envelope["output"].encode()) == 65536 + len(TRUNCATION_MARKER)


async def test_a_command_outliving_the_timeout_is_killed_with_its_children(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "child.pid"
    leaf = command("wait", action=hangs(pid_file))
    app = write_fake_app(tmp_path, application(commands=[leaf]))
    wait = load_application(await introspect(str(app)), str(app)).tools[0]

    outcome = await wait.execute("{}", ExecDeps(timeout=timedelta(seconds=1.5)))

    child_pid = int(pid_file.read_text())
    try:
        assert outcome.is_error and outcome.timed_out
        assert outcome.exec is None
        assert outcome.output == (
            'the command "wait" did not finish within 1.5s (harness.tool_timeout) and was '
            "stopped; output so far:\nwaiting\n"
        )
        assert await wait_for_exit(child_pid)
    finally:
        kill_quietly(child_pid)


async def test_missing_required_argument_is_refused_with_the_roster(tmp_path: Path) -> None:
    stream_rm = by_name(await load_sample(tmp_path))["stream_rm"]

    outcome = await stream_rm.execute('{"force": true}', ExecDeps())

    assert outcome.is_error
    assert outcome.output == (
        'tool "stream_rm" was called without required parameter(s): stream. '
        "required: stream; optional: force"
    )


async def test_an_unknown_property_is_refused(tmp_path: Path) -> None:
    stream_rm = by_name(await load_sample(tmp_path))["stream_rm"]

    outcome = await stream_rm.execute('{"stream": "ORDERS", "purge": true}', ExecDeps())

    assert outcome.is_error
    assert "unknown parameter(s): purge" in outcome.output


async def test_a_collision_with_another_source_aborts_naming_both(tmp_path: Path) -> None:
    loaded = await load_sample(tmp_path)
    other = write_fake_app(tmp_path, sample_model(), name="other")
    second = load_application(await introspect(str(other)), str(other))

    with pytest.raises(ToolCollisionError) as raised:
        ToolSet(
            [
                ToolSource(f"application {loaded.app_path}", loaded.tools),
                ToolSource(f"remote_tools {second.app_path}", second.tools),
            ]
        )

    assert f"application {loaded.app_path}" in str(raised.value)
    assert f"remote_tools {second.app_path}" in str(raised.value)


def entries(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


async def test_shell_metacharacters_reach_the_application_verbatim(tmp_path: Path) -> None:
    stream_rm = by_name(await load_sample(tmp_path))["stream_rm"]
    hostile = "ORDERS; touch pwned $(id) `id` | cat > out && echo *"

    outcome = await stream_rm.execute(json.dumps({"stream": hostile}), ExecDeps())

    assert json.loads(outcome.output)["argv"][-1] == hostile
    assert entries(tmp_path) == ["app"]
