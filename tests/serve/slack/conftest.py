"""A Slack bot served against the fake Slack, its model the fake Messages API through the real
anthropic SDK, its sessions in a file store (or JetStream on a real nats-server)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.agent.resources import Resources
from fisk_ai.config import Mode, parse
from fisk_ai.llm.anthropic import AnthropicProvider
from fisk_ai.serve.server import HostedChannels
from fisk_ai.serve.slack.channel import SlackChannel
from fisk_ai.serve.slack.hosting import take_slack
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.store import SessionStore
from fisk_ai.tools.base import Tool
from fisk_ai.tools.builtin.hitl import hitl_tools
from tests.agent.conftest import SETTINGS, FakeTool, toolset
from tests.fakes.messages_api import FakeMessagesAPI, Turn
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack

CHANNEL = "C0GENERAL"
ANA = "U024BE7LH"
BEN = "U0LM3D6TP"

CONFIG = """
identity: helper
system_prompt: You inspect NATS servers.
llm:
  model: claude-test
expose:
  agent:
    slack: {slack}
"""


def slack_config(slack: str = "{}") -> Any:
    return parse(CONFIG.format(slack=slack), Mode.SERVE)


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    fake.person(ANA, real_name="Ana Silva", display_name="ana", handle="ana.silva")
    fake.person(BEN, real_name="", display_name="Ben Cole", handle="ben")
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def model() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI() as api:
        yield api


@dataclass
class Bot:
    channel: SlackChannel
    hosted: HostedChannels
    store: SessionStore


StartBot = Callable[..., contextlib.AbstractAsyncContextManager[Bot]]


def environment(slack: FakeSlack, **overrides: str) -> dict[str, str]:
    return {
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_API_URL": slack.api_url,
        **overrides,
    }


@pytest.fixture
def start_bot(slack: FakeSlack, model: FakeMessagesAPI, tmp_path: Path) -> StartBot:
    @contextlib.asynccontextmanager
    async def start(
        turns: Sequence[Turn] = (),
        *,
        settings: str = "{}",
        tools: Sequence[Tool] = (),
        store: SessionStore | None = None,
    ) -> AsyncIterator[Bot]:
        model.script(turns)
        cfg = slack_config(settings)
        provider = AnthropicProvider("key", base_url=model.base_url, max_retries=0)
        sessions = store if store is not None else FileSessionStore(tmp_path / "runs")
        resources = Resources(
            dataclasses.replace(SETTINGS, interactive=True),
            provider,
            toolset(*hitl_tools(), *tools),
            sessions,
        )
        try:
            async with take_slack(cfg, resources, environ=environment(slack)) as channel:
                hosted = HostedChannels(
                    cfg.identity, resources, [(channel, channel.options.workers)]
                )
                hosted.start()
                try:
                    yield Bot(channel, hosted, sessions)
                finally:
                    await hosted.drain()
                    await hosted.close()
        finally:
            await provider.aclose()

    return start


def status_tool() -> FakeTool:
    return FakeTool("stream_info")
