"""The Slack channel's start: tokens from the environment, auth.test before anything is taken,
a session store it can read; and a token Slack stops accepting later faults the worker."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from fisk_ai.agent.resources import Resources
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.errors import FiskError
from fisk_ai.llm.anthropic import AnthropicProvider
from fisk_ai.serve.slack.hosting import take_slack
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.jetstream import JetStreamSessionStore
from fisk_ai.sessions.store import SessionStore
from tests.agent.conftest import SETTINGS, toolset
from tests.fakes.messages_api import FakeMessagesAPI, reply, text
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.serve.slack.conftest import ANA, CHANNEL, StartBot, environment, slack_config


def resources_over(model: FakeMessagesAPI, store: SessionStore) -> Resources:
    provider = AnthropicProvider("key", base_url=model.base_url, max_retries=0)
    return Resources(dataclasses.replace(SETTINGS, interactive=True), provider, toolset(), store)


async def refusal(slack: FakeSlack, resources: Resources, **overrides: str) -> str:
    with pytest.raises(FiskError) as refused:
        async with take_slack(slack_config(), resources, environ=environment(slack, **overrides)):
            pass
    return str(refused.value)


@pytest.mark.parametrize(
    ("variable", "prefix"), [("SLACK_APP_TOKEN", "xapp-"), ("SLACK_BOT_TOKEN", "xoxb-")]
)
async def test_a_missing_token_is_refused_naming_its_variable(
    slack: FakeSlack, model: FakeMessagesAPI, tmp_path: Path, variable: str, prefix: str
) -> None:
    resources = resources_over(model, FileSessionStore(tmp_path))

    message = await refusal(slack, resources, **{variable: ""})

    assert message.startswith(f"expose.agent.slack needs {variable}")
    assert f"({prefix}...)" in message
    assert slack.calls == []


async def test_a_bot_token_slack_refuses_fails_the_start_at_auth_test(
    slack: FakeSlack, model: FakeMessagesAPI, tmp_path: Path
) -> None:
    resources = resources_over(model, FileSessionStore(tmp_path))

    message = await refusal(slack, resources, SLACK_BOT_TOKEN="xoxp-not-a-bot-token")

    assert message == (
        "Slack refused SLACK_BOT_TOKEN at auth.test (invalid_auth); export the app's current "
        "bot token"
    )
    assert [call.method for call in slack.calls] == ["auth.test"]
    assert slack.connections == 0


async def test_an_app_token_slack_refuses_fails_the_start(
    slack: FakeSlack, model: FakeMessagesAPI, tmp_path: Path
) -> None:
    resources = resources_over(model, FileSessionStore(tmp_path))

    message = await refusal(slack, resources, SLACK_APP_TOKEN="xoxb-not-an-app-token")

    assert message.startswith("Slack refused SLACK_APP_TOKEN at apps.connections.open")
    assert slack.connections == 0


async def test_a_plain_http_api_url_off_this_machine_is_refused(
    slack: FakeSlack, model: FakeMessagesAPI, tmp_path: Path
) -> None:
    resources = resources_over(model, FileSessionStore(tmp_path))

    message = await refusal(slack, resources, SLACK_API_URL="http://slack.example.com/api/")

    assert "SLACK_API_URL" in message and "https" in message


@pytest.fixture
async def nats_client() -> AsyncIterator[NatsClient]:
    if locate_server_binary() is None:
        pytest.skip("no nats-server binary on this machine")
    async with EmbeddedBroker(jetstream=True) as broker:
        connection = await broker.connect(name="test")
        yield connection
        await connection.close()


async def test_a_session_store_it_cannot_read_is_refused_naming_the_key(
    slack: FakeSlack, model: FakeMessagesAPI, nats_client: NatsClient
) -> None:
    # harness.sessions names a JetStream stream nobody created.
    store = JetStreamSessionStore("FISK_SESSIONS", connection=nats_client, context_name="test")
    resources = resources_over(model, store)

    message = await refusal(slack, resources)

    assert message.startswith(
        "expose.agent.slack needs a session store it can read, since a thread is a "
        "conversation, and harness.sessions cannot be read: stream FISK_SESSIONS does not exist"
    )
    assert slack.calls == []


async def test_a_token_revoked_while_serving_faults_the_worker(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    async with start_bot([reply(text("never sent"))]) as bot:
        slack.revoked.add(BOT_TOKEN)
        await slack.mention(CHANNEL, ANA, "hello")
        serving = bot.hosted.serving
        assert serving is not None
        with pytest.raises(FiskError) as fault:
            await serving

    assert str(fault.value).startswith("Slack refused SLACK_BOT_TOKEN (token_revoked)")


async def test_an_app_token_revoked_while_serving_faults_the_worker(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    async with start_bot([reply(text("never sent"))]) as bot:
        slack.revoked.add(APP_TOKEN)
        # The socket drops, and the client asks apps.connections.open for a new address.
        await slack.disconnect_all()
        serving = bot.hosted.serving
        assert serving is not None
        with pytest.raises(FiskError) as fault:
            await serving

    assert str(fault.value).startswith("Slack refused SLACK_APP_TOKEN (token_revoked)")
