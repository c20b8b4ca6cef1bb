"""After a turn uses every iteration it is allowed, what `fisk run --no-tui` prints leads to
where the conversation goes on (the full screen's chat bar), and a line-mode resume of it is
refused as for a conversation between turns, without a model call."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from tests.e2e.agent_runs import fisk, fisk_environment, session_id_of, write_config
from tests.fakes.fiskapp import application, command, write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use

CAP = 2
CONTINUE_PREFIX = "continue with another prompt in the full screen: "


def capped_run(home: Path, api: FakeMessagesAPI) -> subprocess.CompletedProcess[str]:
    app = write_fake_app(home, application("app", commands=[command("say", "Say")]))
    write_config(home, application=app, extra=f"  budget:\n    max_iterations: {CAP}\n")
    return fisk(
        "run",
        "--no-tui",
        "--state-dir",
        "runs",
        "say things",
        cwd=home,
        env=fisk_environment(home, api),
    )


def tool_calls(count: int) -> list[dict[str, object]]:
    return [
        reply(tool_use(f"tu_{index}", "say", {}), stop_reason="tool_use") for index in range(count)
    ]


def test_the_line_printed_after_the_cap_names_the_full_screen_command(tmp_path: Path) -> None:
    with FakeMessagesAPI(tool_calls(CAP)) as api:
        capped = capped_run(tmp_path, api)

    session = session_id_of(capped.stderr)
    assert capped.returncode == 1, capped.stderr
    assert capped.stderr.splitlines()[-1] == (
        f"{CONTINUE_PREFIX}fisk run --state-dir runs --resume {session}"
    )


def test_a_line_mode_resume_after_the_cap_is_refused_naming_the_full_screen(
    tmp_path: Path,
) -> None:
    with FakeMessagesAPI([*tool_calls(CAP), reply(text("More."))]) as api:
        capped = capped_run(tmp_path, api)
        printed = capped.stderr.splitlines()[-1].removeprefix(CONTINUE_PREFIX)
        resumed = fisk(
            *shlex.split(printed)[1:], "--no-tui", cwd=tmp_path, env=fisk_environment(tmp_path, api)
        )

    session = session_id_of(capped.stderr)
    assert resumed.returncode == 1
    assert resumed.stdout == ""
    assert resumed.stderr.splitlines() == [
        f"fisk: error: conversation {session} is waiting for its next prompt, which only the "
        f"full screen takes; continue it on a terminal without --no-tui: {printed}"
    ]
    assert len(api.requests) == CAP
