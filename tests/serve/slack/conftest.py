"""A Slack bot served against the fake Slack, its model the fake Messages API through the real
anthropic SDK, its sessions in a file store (or JetStream on a real nats-server).

The bot edits its status messages at most once per ``edit_interval``. Slack's own pace is a
second; tests about anything else run the bot at ``QUICK_EDITS`` so they do not wait on it."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from fisk_ai.agent.resources import Resources
from fisk_ai.agent.settings import AgentSettings
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


QUICK_EDITS = timedelta(milliseconds=20)


def slack_config(slack: str = "{}") -> Any:
    return parse(CONFIG.format(slack=slack), Mode.SERVE)


class PacingSlack(FakeSlack):
    """The fake Slack, which can also answer edits as Slack does when they come too fast:
    HTTP 429 with Retry-After."""

    def __init__(self) -> None:
        super().__init__()
        self.too_fast: list[int] = []
        """The Retry-After seconds of the next chat.update answers, one each."""
        self.refused_edits: list[dict[str, Any]] = []

    async def _api(self, request: web.Request) -> web.Response:
        if request.match_info["method"] != "chat.update" or not self.too_fast:
            return await super()._api(request)
        retry_after = self.too_fast.pop(0)
        json_body = request.content_type == "application/json"
        self.refused_edits.append(dict(await request.json() if json_body else await request.post()))
        await self._touch()
        return web.json_response(
            {"ok": False, "error": "ratelimited"},
            status=429,
            headers={"Retry-After": str(retry_after)},
        )


@pytest.fixture
async def slack() -> AsyncIterator[PacingSlack]:
    fake = PacingSlack()
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
        edit_interval: timedelta = QUICK_EDITS,
        retries: int = 0,
        agent: AgentSettings = SETTINGS,
    ) -> AsyncIterator[Bot]:
        model.script(turns)
        cfg = slack_config(settings)
        provider = AnthropicProvider("key", base_url=model.base_url, max_retries=retries)
        sessions = store if store is not None else FileSessionStore(tmp_path / "runs")
        resources = Resources(
            dataclasses.replace(agent, interactive=True),
            provider,
            toolset(*hitl_tools(), *tools),
            sessions,
        )
        try:
            async with take_slack(
                cfg, resources, environ=environment(slack), edit_interval=edit_interval
            ) as channel:
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
