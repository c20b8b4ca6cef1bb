"""examples/slack: the app manifest an operator pastes into Slack grants what the channel uses,
and the agent beside it loads as `fisk serve` loads it."""

from __future__ import annotations

from pathlib import Path

import yaml

from fisk_ai.config import Mode, load

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "slack"


def test_the_manifest_grants_what_the_channel_uses() -> None:
    manifest = yaml.safe_load((EXAMPLE / "manifest.yaml").read_text(encoding="utf-8"))
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] is True
    assert settings["interactivity"]["is_enabled"] is True  # button presses come back
    assert settings["event_subscriptions"]["bot_events"] == ["app_mention"]
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == {
        "app_mentions:read",
        "channels:history",  # the context a mention opens with, in public channels
        "chat:write",  # status, answers and questions
        "groups:history",  # the same in private channels
        "users:read",  # speakers named rather than shown by id
    }


def test_the_example_agent_loads_as_fisk_serve_loads_it() -> None:
    cfg = load(EXAMPLE / "agent.yaml", Mode.SERVE)
    assert cfg.expose.agent.slack is not None
    assert cfg.nats_context == ""  # a Slack bot with file sessions needs no NATS
    assert Path(cfg.application_path).is_file()
