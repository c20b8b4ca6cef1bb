"""`fisk serve` with expose.agent.slack, as an operator starts it: the installed command against
the fake Slack, the fake Messages API and an embedded nats-server found through a NATS context."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from pathlib import Path

import pytest

from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from tests.e2e.agent_runs import fisk_environment
from tests.e2e.conftest import FISK
from tests.fakes.messages_api import FakeMessagesAPI, reply, text
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.serve.slack.conftest import ANA, CHANNEL

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

WAIT = 30.0
CONFIG = """\
identity: helper
nats_context: test
system_prompt: You inspect NATS servers for the people in this Slack workspace.
llm:
  model: claude-test-1
expose:
  agent:
    slack: {}
"""


def expected_banner() -> str:
    lines = [
        "Serving helper/dev:",
        "",
        "        Endpoints: slack",
        "            Model: claude-test-1",
        "    Agent Context: test",
        "         Sessions: file",
        "           Memory: disabled",
        "        Knowledge: disabled",
        "        Telemetry: disabled",
        "     Tool Timeout: 5m0s",
        "",
        "  Answering in Slack:",
        "",
        "            Workers: 5",
        "           Progress: enabled",
        "       Answer Grace: 30s",
        "    Answering a prompt runs the agent loop and reaches every tool the top-level include "
        "and exclude selected.",
    ]
    return "\n".join(lines) + "\n"


async def test_fisk_serve_answers_a_mention_and_drains_on_interrupt(
    tmp_path: Path, slack: FakeSlack
) -> None:
    config = tmp_path / "slack.yaml"
    config.write_text(CONFIG)
    async with EmbeddedBroker() as broker:
        contexts = tmp_path / "xdg" / "nats" / "context"
        contexts.mkdir(parents=True)
        (contexts / "test.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
        with FakeMessagesAPI([reply(text("Two servers are up."))]) as api:
            environment = fisk_environment(
                tmp_path,
                api,
                extra={
                    "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
                    "SLACK_APP_TOKEN": APP_TOKEN,
                    "SLACK_BOT_TOKEN": BOT_TOKEN,
                    "SLACK_API_URL": slack.api_url,
                },
            )
            process = await asyncio.create_subprocess_exec(
                str(FISK),
                "serve",
                "--config",
                str(config),
                "--state-dir",
                str(tmp_path / "sessions"),
                cwd=tmp_path,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            try:
                assert process.stdout is not None
                expected = expected_banner()
                printed = await asyncio.wait_for(process.stdout.readexactly(len(expected)), WAIT)
                assert printed.decode() == expected
                mention = await slack.mention(CHANNEL, ANA, "how many servers are up?")
                await slack.wait_for(
                    lambda: any(
                        m.text == "Two servers are up."
                        for m in slack.bot_messages(CHANNEL, mention.ts)
                    )
                )
                process.send_signal(signal.SIGINT)
                code = await asyncio.wait_for(process.wait(), WAIT)
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()

    assert code == 0
    assert [call.method for call in slack.calls][:2] == ["auth.test", "apps.connections.open"]
