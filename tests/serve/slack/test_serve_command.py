"""`fisk serve` with expose.agent.slack, as an operator starts it: the installed command against
the fake Slack and the fake Messages API. A Slack bot keeping its sessions in files reaches no
NATS server, so it starts with no NATS context at all; one naming a context does not connect to
it either."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from tests.e2e.agent_runs import fisk, fisk_environment
from tests.e2e.conftest import FISK
from tests.fakes.messages_api import FakeMessagesAPI, reply, text
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.patience import DEADLINE
from tests.serve.slack.conftest import ANA, CHANNEL

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

WAIT = DEADLINE
CONFIG = """\
identity: helper
system_prompt: You inspect NATS servers for the people in this Slack workspace.
llm:
  model: claude-test-1
expose:
  agent:
    slack: {}
"""


def expected_banner(tool_directory: Path) -> str:
    """The guide's Slack banner: no context row, since the bot reaches no NATS server, and no
    memory row, since memory is off."""
    lines = [
        "Serving helper/dev:",
        "",
        "         Endpoints: slack",
        "             Model: claude-test-1",
        "          Sessions: file",
        "         Knowledge: disabled",
        "         Telemetry: disabled",
        f"    Tool Directory: {tool_directory}",
        "      Tool Timeout: 5m0s",
        "",
        "  Answering in Slack:",
        "",
        "             Workers: 5",
        "            Progress: enabled",
        "        Answer Grace: 30s",
        "    A mention of the bot runs the agent loop on its thread and reaches every tool the "
        "top-level include and exclude selected.",
    ]
    return "\n".join(lines) + "\n"


async def answer_a_mention(
    tmp_path: Path, slack: FakeSlack, config: Path, environment: Mapping[str, str]
) -> int:
    """Start `fisk serve --config CONFIG`, check its banner, mention the bot and wait for its
    answer in the thread, then interrupt it; its exit code."""
    process = await asyncio.create_subprocess_exec(
        str(FISK),
        "serve",
        "--config",
        str(config),
        "--state-dir",
        str(tmp_path / "sessions"),
        cwd=tmp_path,
        env=dict(environment),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        expected = expected_banner(tmp_path)
        printed = await asyncio.wait_for(process.stdout.readexactly(len(expected)), WAIT)
        assert printed.decode() == expected
        mention = await slack.mention(CHANNEL, ANA, "how many servers are up?")
        await slack.wait_for(
            lambda: any(
                m.text == "Two servers are up." for m in slack.bot_messages(CHANNEL, mention.ts)
            )
        )
        process.send_signal(signal.SIGINT)
        return await asyncio.wait_for(process.wait(), WAIT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def slack_environment(tmp_path: Path, slack: FakeSlack, api: FakeMessagesAPI) -> dict[str, str]:
    """The fake Slack's tokens and address, and a NATS configuration directory holding no
    context and selecting none."""
    return fisk_environment(
        tmp_path,
        api,
        extra={
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "SLACK_APP_TOKEN": APP_TOKEN,
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_API_URL": slack.api_url,
        },
    )


async def test_fisk_serve_answers_a_mention_and_drains_on_interrupt(
    tmp_path: Path, slack: FakeSlack
) -> None:
    # The context is named and reachable, and nothing the bot runs uses it.
    config = tmp_path / "slack.yaml"
    config.write_text(
        CONFIG.replace("identity: helper\n", "identity: helper\nnats_context: test\n")
    )
    async with EmbeddedBroker() as broker:
        contexts = tmp_path / "xdg" / "nats" / "context"
        contexts.mkdir(parents=True)
        (contexts / "test.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
        with FakeMessagesAPI([reply(text("Two servers are up."))]) as api:
            code = await answer_a_mention(
                tmp_path, slack, config, slack_environment(tmp_path, slack, api)
            )

    assert code == 0
    assert [call.method for call in slack.calls][:2] == ["auth.test", "apps.connections.open"]


async def test_a_slack_bot_with_file_sessions_starts_without_any_nats_context(
    tmp_path: Path, slack: FakeSlack
) -> None:
    config = tmp_path / "slack.yaml"
    config.write_text(CONFIG)
    with FakeMessagesAPI([reply(text("Two servers are up."))]) as api:
        code = await answer_a_mention(
            tmp_path, slack, config, slack_environment(tmp_path, slack, api)
        )

    assert code == 0
    assert not (tmp_path / "xdg" / "nats").exists()


@pytest.mark.parametrize(
    ("block", "refusal"),
    [
        ("    a2a:\n      prompts: {}\n", '"nats_context" is required by expose.agent.a2a.prompts'),
        (
            "harness:\n  sessions:\n    backend: jetstream\n    options:\n      stream: S\n",
            "no NATS context is named and none is selected",
        ),
    ],
    ids=["prompts beside slack", "jetstream sessions"],
)
def test_what_reaches_nats_is_refused_without_a_context_naming_the_key(
    tmp_path: Path, slack: FakeSlack, block: str, refusal: str
) -> None:
    config = tmp_path / "slack.yaml"
    config.write_text(CONFIG + block if block.startswith(" ") else block + CONFIG)
    with FakeMessagesAPI() as api:
        ended = fisk(
            "serve",
            "--config",
            str(config),
            cwd=tmp_path,
            env=slack_environment(tmp_path, slack, api),
        )

    assert ended.returncode == 1
    [line] = ended.stderr.splitlines()
    assert refusal in line and "nats_context" in line, line
    assert slack.calls == []
