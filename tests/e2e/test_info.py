"""`fisk info` as a user runs it: the installed command, a real (fake) fisk application."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.e2e.conftest import FISK, RunFisk
from tests.fakes.fiskapp import application, command, sample_model, write_fake_app
from tests.patience import DEADLINE


def write_config(directory: Path, text: str) -> Path:
    path = directory / "agent.yaml"
    path.write_text(text)
    return path


def tool_rows(stdout: str) -> dict[str, str]:
    """Tool name -> the whole row, from the plain report's Tools section."""
    section = stdout.split("Tools:\n", 1)[1].split("\n\n", 1)[0]
    rows = section.splitlines()[1:]
    return {row.split()[0]: row for row in rows}


def test_cowsay_example_lists_say_and_think(run_fisk: RunFisk) -> None:
    result = run_fisk("info", "--config", str(REPO_ROOT / "examples/cowsay/agent.yaml"))
    assert result.returncode == 0, result.stderr
    assert set(tool_rows(result.stdout)) == {"say", "think"}
    assert "claude-haiku-4-5" in result.stdout


def test_gated_nested_command_denied_hidden_and_globals(tmp_path: Path, run_fisk: RunFisk) -> None:
    app = write_fake_app(tmp_path, sample_model(), name="ops")
    config = write_config(tmp_path, f"application_path: {app}\nglobal_flags: [context]\n")
    result = run_fisk("info", "--config", str(config))
    assert result.returncode == 0, result.stderr
    rows = tool_rows(result.stdout)
    assert set(rows) == {"status", "stream_ls", "stream_rm", "cache_purge"}
    assert "ai:confirm" in rows["stream_rm"].split("local", 1)[1].split()[0]
    globals_section = result.stdout.split("Global flags:\n", 1)[1]
    assert "--context" in globals_section
    assert "[exposed]" in globals_section.splitlines()[0]
    assert "--trace" not in globals_section and "--help" not in globals_section


def test_confirm_tags_gate_and_unmatched_entry_warns(tmp_path: Path, run_fisk: RunFisk) -> None:
    app = write_fake_app(tmp_path, sample_model(), name="ops")
    config = write_config(
        tmp_path,
        f"application_path: {app}\nharness:\n  confirm_tags: [impact:rw, impact:typo]\n",
    )
    result = run_fisk("info", "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert " impact:rw " in tool_rows(result.stdout)["cache_purge"]
    warnings = result.stdout.split("Warnings:\n", 1)[1]
    assert "impact:typo" in warnings
    assert "impact:rw" not in warnings


def test_unknown_ai_tag_and_behaviour_conflict_are_warned(
    tmp_path: Path, run_fisk: RunFisk
) -> None:
    model = application(
        "app",
        commands=[
            command("peek", "Look", tags=["ai:read_only", "ai:destructive"]),
            command("poke", "Touch", tags=["ai:sparkly"]),
        ],
    )
    app = write_fake_app(tmp_path, model)
    result = run_fisk("info", "--config", str(write_config(tmp_path, f"application_path: {app}\n")))
    assert result.returncode == 0, result.stderr
    warnings = result.stdout.split("Warnings:\n", 1)[1]
    assert "ai:sparkly" in warnings
    assert "peek" in warnings


def test_model_section_only_when_a_model_is_set(tmp_path: Path, run_fisk: RunFisk) -> None:
    app = write_fake_app(tmp_path, sample_model())
    bare = run_fisk("info", "--config", str(write_config(tmp_path, f"application_path: {app}\n")))
    assert "Model:" not in bare.stdout
    with_model = run_fisk(
        "info",
        "--config",
        str(
            write_config(
                tmp_path,
                f"application_path: {app}\nllm:\n  model: claude-opus-4-8\n"
                "  thinking: {enabled: false}\n  no_tool_search: true\n",
            )
        ),
    )
    model_section = with_model.stdout.split("\n\n", 1)[0]
    assert "claude-opus-4-8" in model_section
    assert "Thinking: disabled" in model_section
    assert "disabled (no_tool_search)" in model_section


def test_tool_search_reads_unavailable_for_a_model_that_has_none(
    tmp_path: Path, run_fisk: RunFisk
) -> None:
    app = write_fake_app(tmp_path, sample_model())
    config = write_config(
        tmp_path, f"application_path: {app}\nllm:\n  model: claude-opus-4-1-20250805\n"
    )
    model_section = run_fisk("info", "--config", str(config)).stdout.split("\n\n", 1)[0]
    assert "unavailable (llm.model claude-opus-4-1-20250805 has no tool search" in model_section


def test_memory_and_sessions_sections_follow_the_configuration(
    tmp_path: Path, run_fisk: RunFisk
) -> None:
    config = write_config(
        tmp_path,
        "nats_context: production\n"
        "harness:\n"
        "  memory:\n    enabled: true\n    backend: jetstream\n"
        "    options: {bucket: agent-memory, prefix: ''}\n"
        "  sessions:\n    backend: jetstream\n    options: {stream: FISK_SESSIONS}\n",
    )
    result = run_fisk("info", "--config", str(config))
    assert result.returncode == 0, result.stderr
    sessions = result.stdout.split("Sessions:\n", 1)[1].split("\n\n", 1)[0]
    assert "FISK_SESSIONS" in sessions and "production" in sessions
    memory = result.stdout.split("Memory:\n", 1)[1].split("\n\n", 1)[0]
    assert "agent-memory" in memory and "(flat)" in memory and "1024 entries" in memory


def test_piped_output_is_plain_text(tmp_path: Path, run_fisk: RunFisk) -> None:
    result = run_fisk("info", "--config", str(REPO_ROOT / "examples/ops/agent.yaml"))
    assert "\x1b" not in result.stdout
    assert "╭" not in result.stdout


def run_on_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run `fisk ARGS` with stdout on a pseudo-terminal and return what it drew."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [str(FISK), *args],
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "160", **env},
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closes when the child exits
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=DEADLINE)
    os.close(controller)
    assert process.returncode == 0, process.stderr.read() if process.stderr else ""
    return b"".join(chunks).decode()


def test_terminal_gets_tables_unless_no_color() -> None:
    config = str(REPO_ROOT / "examples/ops/agent.yaml")
    environment = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    drawn = run_on_terminal(["info", "--config", config], {**environment, "TERM": "xterm"})
    assert "╭" in drawn
    plain = run_on_terminal(["info", "--config", config], {"NO_COLOR": "1"})
    assert "╭" not in plain and "\x1b[" not in plain
    flag = run_on_terminal(["info", "--no-color", "--config", config], {})
    assert "╭" not in flag


def test_info_imports_neither_textual_nor_anthropic() -> None:
    probe = (
        "import contextlib, io, json, sys\n"
        "from fisk_ai.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(sys.argv[1:])\n"
        "assert code == 0, code\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('textual', 'anthropic'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, "info", "--config", "examples/cowsay/agent.yaml"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_help_imports_neither_textual_nor_anthropic_nor_the_config() -> None:
    probe = (
        "import contextlib, io, json, sys\n"
        "from fisk_ai.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('textual', 'anthropic', 'pydantic', 'rich', 'yaml'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_include_and_exclude_choose_the_tools_by_name_and_tag(
    tmp_path: Path, run_fisk: RunFisk
) -> None:
    app = write_fake_app(tmp_path, sample_model(), name="ops")

    def tools(selection: str) -> set[str]:
        config = write_config(tmp_path, f"application_path: {app}\n{selection}")
        result = run_fisk("info", "--config", str(config))
        assert result.returncode == 0, result.stderr
        return set(tool_rows(result.stdout))

    everything = {"status", "stream_ls", "stream_rm", "cache_purge"}
    assert tools("") == everything
    assert tools("include: {tools: ['^stream_']}\n") == {"stream_ls", "stream_rm"}
    assert tools("include: {tags: [ai:confirm]}\n") == {"stream_rm"}
    assert tools("exclude: {tools: ['_rm$']}\n") == everything - {"stream_rm"}
    assert tools("exclude: {tags: [impact:rw]}\n") == {"status", "stream_ls"}
