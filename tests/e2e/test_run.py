"""`fisk run --no-tui` as a user runs it: the installed command, the real anthropic SDK against
the fake Messages API, and a fake fisk application whose commands the model calls.

Most checks read one shared run (and its twin with --tool-output --thinking), since a run costs
a second or two: the model narrates, thinks, calls a command that echoes its environment and a
command gated by harness.confirm_tags, then answers in markdown.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT
from tests.e2e.agent_runs import (
    FAKE_KEY,
    command_output,
    fisk,
    fisk_environment,
    session_id_of,
    summary_fields,
    tool_results,
    write_config,
)
from tests.fakes.fiskapp import (
    application,
    arg,
    command,
    echoes,
    logged,
    runs_of,
    write_fake_app,
)
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, thinking, tool_use, usage
from tests.patience import DEADLINE
from tests.telemetry.receiver import Receiver, attributes

# The shared runs are module fixtures; on one xdist worker each runs once, not once per worker.
pytestmark = pytest.mark.xdist_group("e2e-run")

PROMPT = "report on the environment"
ANSWER = "# Report\n\nThe cache is **untouched**."
NARRATION = "Checking the environment first."
REASONING = "The environment tells me where I run."
FIVE_MINUTES = {"type": "ephemeral", "ttl": "5m"}
HITL_TOOLS = {"ask_human_confirm", "ask_human_select", "ask_human_input"}

# Values no tool may ever see, under these names or any other.
SECRETS = {
    "ANTHROPIC_AUTH_TOKEN": "auth-token-must-not-leak",
    "OTEL_EXPORTER_OTLP_HEADERS": "authorization=otlp-header-must-not-leak",
}

CONTRACT_TURNS = [
    reply(
        thinking(REASONING, "c2lnbmF0dXJlLTE="),
        text(NARRATION),
        tool_use("tu_show", "show", {"what": "env"}),
        tool_use("tu_purge", "purge", {}),
        stop_reason="tool_use",
        usage_counts=usage(100, 20, cache_read=40),
    ),
    reply(text(ANSWER), usage_counts=usage(60, 10, cache_read=80)),
]


@dataclass(frozen=True)
class AgentRun:
    """One finished `fisk run`, what the fake model was sent, and where it kept things."""

    result: subprocess.CompletedProcess[str]
    requests: list[Any]
    home: Path
    state: Path
    purge_log: Path

    @property
    def stderr_lines(self) -> list[str]:
        return self.result.stderr.splitlines()

    def tools(self, request: int = 0) -> dict[str, Any]:
        return {tool["name"]: tool for tool in self.requests[request]["tools"]}


def fleet_application(purge_log: Path) -> dict[str, Any]:
    """Six commands; with the three ask_human tools a run offers nine, one short of search."""
    return application(
        "fleet",
        commands=[
            command(
                "show",
                "Show the environment",
                tags=["ai:read_only", "team:blue"],
                args=[arg("what", "What to show")],
            ),
            command(
                "purge", "Purge the cache", tags=["impact:rw"], action=logged(echoes(), purge_log)
            ),
            command("status", "Fleet status"),
            command("logs", "Recent logs"),
            command("restart", "Restart a node"),
            command("scale", "Scale the fleet"),
        ],
    )


HARNESS = (
    "harness:\n  human_in_the_loop: {enabled: true}\n  confirm_tags: [impact:rw, impact:typo]\n"
)


def contract_run(home: Path, *flags: str) -> AgentRun:
    purge_log = home / "purge-runs.jsonl"
    app = write_fake_app(home, fleet_application(purge_log), name="fleet")
    config = write_config(home, application=app, extra=HARNESS)
    state = home / "sessions"
    with FakeMessagesAPI(CONTRACT_TURNS) as api:
        result = fisk(
            "run",
            "--no-tui",
            *flags,
            "--state-dir",
            str(state),
            "--config",
            str(config),
            PROMPT,
            cwd=home,
            env=fisk_environment(home, api, SECRETS),
        )
    return AgentRun(result, list(api.requests), home, state, purge_log)


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory: pytest.TempPathFactory) -> AgentRun:
    return contract_run(tmp_path_factory.mktemp("plain"))


@pytest.fixture(scope="module")
def flagged_run(tmp_path_factory: pytest.TempPathFactory) -> AgentRun:
    return contract_run(tmp_path_factory.mktemp("flagged"), "--tool-output", "--thinking")


@pytest.fixture(scope="module")
def ten_tool_run(tmp_path_factory: pytest.TempPathFactory) -> AgentRun:
    """Seven application commands and the three ask_human tools: ten, the search threshold."""
    home = tmp_path_factory.mktemp("ten")
    app = write_fake_app(
        home, application("wide", commands=[command(f"c{i}", f"Command {i}") for i in range(7)])
    )
    config = write_config(
        home, application=app, extra="harness:\n  human_in_the_loop: {enabled: true}\n"
    )
    with FakeMessagesAPI([reply(text("Nothing to do."))]) as api:
        result = fisk(
            "run",
            "--no-tui",
            "--state-dir",
            str(home / "sessions"),
            "--config",
            str(config),
            "anything to do?",
            cwd=home,
            env=fisk_environment(home, api),
        )
    return AgentRun(result, list(api.requests), home, home / "sessions", home / "unused")


def succeeded(run: AgentRun) -> AgentRun:
    assert run.result.returncode == 0, run.result.stderr
    return run


# The stdout/stderr contract.


def test_stdout_is_exactly_the_answer_as_raw_markdown(plain_run: AgentRun) -> None:
    assert succeeded(plain_run).result.stdout == ANSWER + "\n"


def test_each_call_is_a_command_line_on_stderr(plain_run: AgentRun) -> None:
    lines = succeeded(plain_run).stderr_lines
    assert "-> show -- env" in lines
    assert "-> purge" in lines


def test_narration_goes_to_stderr_not_stdout(plain_run: AgentRun) -> None:
    assert NARRATION in succeeded(plain_run).stderr_lines
    assert NARRATION not in plain_run.result.stdout


def test_tool_output_and_thinking_are_hidden_by_default(plain_run: AgentRun) -> None:
    lines = succeeded(plain_run).stderr_lines
    assert "<-" not in lines
    assert not any(REASONING in line for line in lines)
    assert '"argv"' not in plain_run.result.stderr


def test_tool_output_flag_shows_each_result_after_its_call(flagged_run: AgentRun) -> None:
    lines = succeeded(flagged_run).stderr_lines
    show = lines.index("-> show -- env")
    assert lines[show + 1] == "<-"
    assert json.loads(lines[show + 2])["argv"] == ["show", "--", "env"]
    purge = lines.index("-> purge")
    assert lines[purge + 1] == "<-"
    assert '"allowed":false' in lines[purge + 2]


def test_thinking_flag_shows_the_reasoning_as_thought_lines(flagged_run: AgentRun) -> None:
    assert f"\N{THOUGHT BALLOON} {REASONING}" in succeeded(flagged_run).stderr_lines
    assert REASONING not in flagged_run.result.stdout


def test_summary_line_counts_the_run(plain_run: AgentRun) -> None:
    fields = summary_fields(succeeded(plain_run).result.stderr)
    assert fields["model"] == "claude-test-1"
    assert fields["llm_calls"] == "2"
    assert fields["tool_calls"] == "2"
    assert fields["tokens"] == "160/30"
    assert fields["cached"] == "120"
    assert fields["thinking"] == "0"
    assert (plain_run.state / f"{fields['session']}.json").is_file()


def test_summary_follows_a_blank_line_after_everything_else(plain_run: AgentRun) -> None:
    lines = succeeded(plain_run).stderr_lines
    assert lines[-1].startswith("Run summary: ")
    assert lines[-2] == ""


def test_unmatched_confirm_tag_is_a_warning_line(plain_run: AgentRun) -> None:
    warnings = [line for line in succeeded(plain_run).stderr_lines if line.startswith("warning: ")]
    assert len(warnings) == 1
    assert '"impact:typo"' in warnings[0]


# The request shape the model receives.


def test_tool_descriptions_end_with_a_tags_line(plain_run: AgentRun) -> None:
    tools = succeeded(plain_run).tools()
    assert tools["show"]["description"] == "Show the environment\n\nTags: ai:read_only, team:blue"
    assert tools["purge"]["description"].endswith("\n\nTags: impact:rw")
    assert "Tags:" not in tools["status"]["description"]


def test_cache_breakpoints_sit_on_the_last_system_block_and_the_request(
    plain_run: AgentRun,
) -> None:
    for request in succeeded(plain_run).requests:
        system = request["system"]
        assert len(system) == 2  # the system_prompt, then the human-in-the-loop note
        assert system[-1]["cache_control"] == FIVE_MINUTES
        assert "cache_control" not in system[0]
        assert request["cache_control"] == FIVE_MINUTES


def test_nine_tools_are_all_sent_without_tool_search(plain_run: AgentRun) -> None:
    tools = succeeded(plain_run).tools()
    assert len(tools) == 9
    assert not any(tool.get("defer_loading") for tool in tools.values())
    assert all(tool["type"] == "custom" for tool in tools.values())


def test_ten_tools_defer_the_application_behind_bm25_search(ten_tool_run: AgentRun) -> None:
    tools = succeeded(ten_tool_run).tools()
    search = [tool for tool in tools.values() if tool["type"] != "custom"]
    assert len(search) == 1
    assert search[0]["name"] == "tool_search_tool_bm25"
    assert search[0]["type"].startswith("tool_search_tool_bm25")
    application_tools = {f"c{i}" for i in range(7)}
    assert set(tools) == application_tools | HITL_TOOLS | {"tool_search_tool_bm25"}
    assert all(tools[name]["defer_loading"] is True for name in application_tools)
    assert not any(tools[name].get("defer_loading") for name in HITL_TOOLS)


# What a tool sees.


def test_tools_get_llmformat_and_no_credentials(plain_run: AgentRun) -> None:
    output = command_output(tool_results(succeeded(plain_run).requests[1])["tu_show"])
    environment = json.loads(output)["env"]
    assert environment["LLMFORMAT"] == "1"
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OTEL_EXPORTER_OTLP_HEADERS"):
        assert name not in environment
    for secret in [FAKE_KEY, *SECRETS.values()]:
        assert secret not in output


# The confirm gate with nobody at a terminal.


def test_gated_command_is_refused_before_asking_and_never_runs(plain_run: AgentRun) -> None:
    refusal = json.loads(tool_results(succeeded(plain_run).requests[1])["tu_purge"])
    assert refusal["allowed"] is False
    assert "no interactive terminal" in refusal["reason"]
    assert "do not retry" in refusal["reason"]
    assert runs_of(plain_run.purge_log) == []
    assert "Run this command?" not in plain_run.result.stderr


# The run as the session commands see it afterwards.


def test_session_ls_lists_the_run_as_completed_with_its_prompt(plain_run: AgentRun) -> None:
    session = session_id_of(succeeded(plain_run).result.stderr)
    listed = fisk(
        "session",
        "--state-dir",
        str(plain_run.state),
        "ls",
        cwd=plain_run.home,
        env=fisk_environment(plain_run.home),
    )
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()[1:]]
    assert [row[:3] for row in rows] == [[session, "claude-test-1", "completed"]]
    assert listed.stdout.splitlines()[1].endswith(PROMPT)


def test_session_show_transcript_prints_the_calls(plain_run: AgentRun) -> None:
    session = session_id_of(succeeded(plain_run).result.stderr)
    shown = fisk(
        "session",
        "--state-dir",
        str(plain_run.state),
        "show",
        session,
        "--transcript",
        cwd=plain_run.home,
        env=fisk_environment(plain_run.home),
    )
    assert shown.returncode == 0, shown.stderr
    transcript = shown.stdout.split("--- transcript ---\n", 1)[1].splitlines()
    assert transcript[0] == f"> {PROMPT}"
    # Drawn as the live run drew them: the command line a call ran, the name of one refused.
    assert "-> show -- env" in transcript
    assert "-> purge" in transcript
    assert any(line.startswith("<- [tu_show] ") for line in transcript)
    assert transcript[-1] == ANSWER.splitlines()[-1]


# The README's first command.


def cassette_answer(path: Path) -> str:
    last = json.loads(path.read_text().splitlines()[-1])
    blocks = last["response"]["message"]["content"]
    return "".join(block["text"]["text"] for block in blocks if "text" in block)


def test_readme_demo_tells_a_cow_joke_offline(tmp_path: Path) -> None:
    result = fisk(
        "run",
        "--no-tui",
        "--tool-output",
        "--replay",
        "examples/cowsay/joke.cassette",
        "--config",
        "examples/cowsay/agent.yaml",
        "tell me a joke",
        cwd=REPO_ROOT,
        env=fisk_environment(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    expected = cassette_answer(REPO_ROOT / "examples/cowsay/joke.cassette")
    assert result.stdout == expected.strip() + "\n"
    assert "-> say -- Why did the cow go to outer space?" in result.stderr
    assert "(oo)\\_______" in result.stderr
    assert "^__^" not in result.stdout


# What a run imports.

IMPORT_PROBE = """
import contextlib, io, json, sys
from fisk_ai.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
heavy = sorted({name.split('.')[0] for name in sys.modules} & {'textual', 'anthropic'})
print(json.dumps({"code": code, "heavy": heavy}))
"""


def imports_of_run(home: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    probe = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, "run", "--no-tui", *args],
        cwd=REPO_ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    report: dict[str, Any] = json.loads(probe.stdout.splitlines()[-1])
    return report


def test_replayed_run_imports_neither_textual_nor_anthropic(tmp_path: Path) -> None:
    report = imports_of_run(
        tmp_path,
        fisk_environment(tmp_path),
        "--replay",
        "examples/cowsay/joke.cassette",
        "--config",
        "examples/cowsay/agent.yaml",
        "tell me a joke",
    )
    assert report == {"code": 0, "heavy": []}


def test_live_run_imports_anthropic_and_never_textual(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with FakeMessagesAPI([reply(text("All quiet."))]) as api:
        report = imports_of_run(
            tmp_path,
            fisk_environment(tmp_path, api),
            "--state-dir",
            str(tmp_path / "sessions"),
            "--config",
            str(config),
            "anything to report?",
        )
    assert report == {"code": 0, "heavy": ["anthropic"]}


def test_the_files_llm_keys_shape_the_request_the_model_receives(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        "system_prompt: You count the stock.\n"
        "llm:\n"
        "  model: claude-inventory-1\n"
        "  thinking: {enabled: false}\n"
        "  reasoning_effort: low\n"
        "  no_prompt_cache: true\n"
        "  budget: {max_output_tokens: 1234}\n"
    )
    with FakeMessagesAPI([reply(text(ANSWER))]) as api:
        result = fisk(
            "run",
            "--no-tui",
            "--config",
            str(config),
            PROMPT,
            cwd=tmp_path,
            env=fisk_environment(tmp_path, api),
        )
        (request,) = api.requests

    assert result.returncode == 0, result.stderr
    assert request["model"] == "claude-inventory-1"
    assert request["system"][0]["text"] == "You count the stock."
    assert request["max_tokens"] == 1234
    assert request["thinking"] == {"type": "disabled"}
    assert request["output_config"] == {"effort": "low"}
    assert "cache_control" not in json.dumps(request)


def _joke_exported(tmp_path: Path, telemetry: str) -> Receiver:
    """The cowsay joke replayed under ``telemetry`` (the block's keys, indented under it), with
    what reached a collector."""
    cowsay = REPO_ROOT / "examples" / "cowsay"
    config = tmp_path / "agent.yaml"
    config.write_text(
        (cowsay / "agent.yaml").read_text().replace("./cowsay.py", str(cowsay / "cowsay.py"))
    )
    receiver = Receiver()
    receiver.start()
    try:
        with config.open("a") as file:
            file.write(f"telemetry:\n  enabled: true\n  endpoint: {receiver.endpoint}\n{telemetry}")
        environment = fisk_environment(tmp_path)
        for name in [name for name in environment if name.startswith(("OTEL_", "FISK_TELEMETRY"))]:
            del environment[name]
        result = fisk(
            "run",
            "--no-tui",
            "--replay",
            str(cowsay / "joke.cassette"),
            "--config",
            str(config),
            "tell me a joke",
            cwd=tmp_path,
            env=environment,
        )
    finally:
        receiver.stop()
    assert result.returncode == 0, result.stderr
    return receiver


def _captured(receiver: Receiver, key: str) -> list[str]:
    chats = [span for span in receiver.spans() if span.name.startswith("chat ")]
    return [str(attributes(chat)[key]) for chat in chats]


def test_the_files_telemetry_keys_reach_the_collector(tmp_path: Path) -> None:
    receiver = _joke_exported(
        tmp_path,
        "  service_name: stock-agent\n  no_metrics: true\n"
        "  capture: {enabled: true, messages: full}\n",
    )

    assert receiver.service_names() == {"stock-agent"}
    assert receiver.metric_names() == set()
    inputs = [json.loads(sent) for sent in _captured(receiver, "gen_ai.input.messages")]
    # full: each of the three calls carries the whole conversation so far.
    assert [len(sent) for sent in inputs] == [1, 3, 5]


def test_the_files_capture_max_bytes_cuts_what_each_span_carries(tmp_path: Path) -> None:
    receiver = _joke_exported(
        tmp_path, "  capture: {enabled: true, messages: full, max_bytes: 256}\n"
    )

    captured = _captured(receiver, "gen_ai.input.messages")
    captured += _captured(receiver, "gen_ai.output.messages")
    assert captured
    assert all(len(value.encode()) <= 256 for value in captured)
    assert all(json.loads(value) for value in captured)  # cut whole, never mid-document
    chats = [span for span in receiver.spans() if span.name.startswith("chat ")]
    assert any("fisk.content.truncated" in attributes(chat) for chat in chats)


def test_a_files_sample_ratio_of_zero_exports_no_spans(tmp_path: Path) -> None:
    receiver = _joke_exported(tmp_path, "  sample_ratio: 0\n")

    assert receiver.spans() == []
    assert receiver.metric_names()  # the export ran; only the spans were sampled out


def test_the_files_llm_provider_chooses_who_answers(tmp_path: Path) -> None:
    cowsay = REPO_ROOT / "examples" / "cowsay"
    config = tmp_path / "agent.yaml"
    config.write_text(
        (cowsay / "agent.yaml")
        .read_text()
        .replace("./cowsay.py", str(cowsay / "cowsay.py"))
        .replace("llm:\n", "llm:\n  provider: replay\n")
    )
    # No API key: only the replay provider the file names can answer.
    environment = fisk_environment(
        tmp_path, extra={"FISK_AI_CASSETTE": str(cowsay / "joke.cassette")}
    )

    result = fisk(
        "run", "--no-tui", "--config", str(config), "tell me a joke", cwd=tmp_path, env=environment
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout == cassette_answer(cowsay / "joke.cassette").strip() + "\n"
