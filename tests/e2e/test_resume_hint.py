"""The resume hint `fisk run` prints runs as printed: a run under a configuration and a journal
directory other than the defaults names both, so the printed command continues that
conversation from the same directory."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.e2e.agent_runs import fisk, fisk_environment, session_id_of, write_config
from tests.fakes.messages_api import FakeMessagesAPI, error, reply, text

HINT_PREFIX = "resume with: "


def test_the_printed_resume_hint_continues_a_run_under_a_named_config_and_state_dir(
    tmp_path: Path,
) -> None:
    config_directory = tmp_path / "my agent"
    config_directory.mkdir()
    write_config(config_directory)
    turns = [error(400, "the request was refused"), reply(text("Three streams."))]
    with FakeMessagesAPI(turns) as api:
        environment = fisk_environment(tmp_path, api)
        first = fisk(
            "run",
            "--no-tui",
            "--config",
            "my agent/agent.yaml",
            "--state-dir",
            "runs",
            "how many streams",
            cwd=tmp_path,
            env=environment,
        )
        hint = first.stderr.splitlines()[-1]
        assert hint.startswith(HINT_PREFIX), first.stderr
        resumed = fisk(
            *shlex.split(hint.removeprefix(HINT_PREFIX))[1:], cwd=tmp_path, env=environment
        )

    session = session_id_of(first.stderr)
    assert hint == (
        f"{HINT_PREFIX}fisk run --config 'my agent/agent.yaml' --state-dir runs --resume {session}"
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "Three streams.\n"
