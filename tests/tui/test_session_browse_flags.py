"""`fisk session browse` takes the group's flags after the action, and a resume from the browser
runs with the flags `fisk run` takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.cli.main import main
from fisk_ai.workstation.sessions_app import SessionsApp


def test_browse_takes_the_groups_flags_after_the_action(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[SessionsApp] = []
    monkeypatch.setattr("fisk_ai.cli.session._on_terminal", lambda: True)
    monkeypatch.setattr(SessionsApp, "run", lambda self, *a, **k: opened.append(self))
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "elsewhere.yaml"
    config.write_text("identity: ops\nsystem_prompt: hi\n", encoding="utf-8")
    before = main(["session", "--state-dir", str(tmp_path), "browse"])
    after = main(["session", "browse", "--state-dir", str(tmp_path), "--config", str(config)])
    assert (before, after) == (0, 0)
    # Named after the action, the configuration is the one a resume would run with.
    assert "--config" in opened[0].resume_refused
    assert opened[1].resume_refused == ""


def test_r_in_the_browser_resumes_with_the_flags_fisk_run_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fisk_ai.serve.hosted import RunOptions

    resumed: list[RunOptions] = []

    def run_full_screen(options: RunOptions) -> int:
        resumed.append(options)
        return 0

    monkeypatch.setattr("fisk_ai.cli.session._on_terminal", lambda: True)
    monkeypatch.setattr(SessionsApp, "run", lambda self, *a, **k: "s-chosen")
    monkeypatch.setattr("fisk_ai.workstation.host.run_full_screen", run_full_screen)
    config = tmp_path / "agent.yaml"
    config.write_text("identity: ops\nsystem_prompt: hi\n", encoding="utf-8")
    flags = ["--replay", "c.cassette", "--force", "--thinking", "--tool-output"]
    browse = ["session", "browse", "--state-dir", str(tmp_path), "--config", str(config)]
    assert main([*browse, *flags, "--api-key", "k-1", "--no-telemetry"]) == 0

    (options,) = resumed
    assert options.resume == "s-chosen"
    assert options.config == str(config)
    assert options.provider.replay == "c.cassette"
    assert options.provider.api_key == "k-1"
    assert options.force and options.thinking and options.tool_output and options.no_telemetry
