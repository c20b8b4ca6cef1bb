"""The Slack channel as `fisk serve` hosts it: the tokens from the environment, the bot checked
with auth.test, the session store checked readable, and the socket-mode connection.

Every check runs before the channel takes a mention, so a missing or refused token, or a
session store the channel cannot read, fails the start with the variable or key named.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from fisk_ai.errors import FiskError
from fisk_ai.serve.slack.options import EDIT_INTERVAL

if TYPE_CHECKING:
    from fisk_ai.agent.resources import Resources
    from fisk_ai.config import Config
    from fisk_ai.serve.slack.channel import SlackChannel

__all__ = [
    "API_URL_VARIABLE",
    "APP_TOKEN_VARIABLE",
    "BOT_TOKEN_VARIABLE",
    "SlackTokens",
    "slack_tokens",
    "take_slack",
]

APP_TOKEN_VARIABLE = "SLACK_APP_TOKEN"  # noqa: S105 - a variable's name, not a token
BOT_TOKEN_VARIABLE = "SLACK_BOT_TOKEN"  # noqa: S105 - a variable's name, not a token
API_URL_VARIABLE = "SLACK_API_URL"
"""Where the Web API is reached, for a proxy or a test double; Slack's own by default."""
_PROBE_SESSION = "s-startup-probe"


def _token(environ: Mapping[str, str], variable: str, prefix: str, what: str) -> str:
    token = environ.get(variable, "").strip()
    if not token:
        raise FiskError(
            f"expose.agent.slack needs {variable}, the {what} ({prefix}...) from the Slack app; "
            "export it before starting fisk serve"
        )
    return token


def _api_url(environ: Mapping[str, str]) -> str:
    from urllib.parse import urlsplit

    url = environ.get(API_URL_VARIABLE, "").strip()
    if not url:
        return ""
    parts = urlsplit(url)
    loopback = parts.hostname in {"localhost", "127.0.0.1", "::1"}
    if parts.scheme not in {"http", "https"} or (parts.scheme == "http" and not loopback):
        raise FiskError(
            f"{API_URL_VARIABLE} {url} must be an https URL (http only to this machine)"
        )
    return url if url.endswith("/") else url + "/"


@dataclass(frozen=True)
class SlackTokens:
    app: str
    bot: str
    api_url: str


def slack_tokens(environ: Mapping[str, str]) -> SlackTokens:
    """The tokens (and Web API address) the environment gives the channel; a missing one is
    refused naming its variable."""
    return SlackTokens(
        app=_token(environ, APP_TOKEN_VARIABLE, "xapp-", "app-level token"),
        bot=_token(environ, BOT_TOKEN_VARIABLE, "xoxb-", "bot token"),
        api_url=_api_url(environ),
    )


@contextlib.asynccontextmanager
async def take_slack(
    cfg: Config,
    resources: Resources,
    *,
    environ: Mapping[str, str] | None = None,
    edit_interval: timedelta = EDIT_INTERVAL,
) -> AsyncIterator[SlackChannel]:
    """The Slack channel of ``cfg`` over ``resources``, connected; the socket closes on exit.
    ``edit_interval`` is the least time between two edits of a thread's status messages."""
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    from fisk_ai.serve.slack.channel import SlackChannel
    from fisk_ai.serve.slack.options import SlackOptions
    from fisk_ai.serve.slack.socket import ReportingSocket
    from fisk_ai.sessions.errors import SessionError

    slack = cfg.expose.agent.slack
    assert slack is not None, "only called with expose.agent.slack set"
    environ = os.environ if environ is None else environ
    tokens = slack_tokens(environ)
    try:
        await resources.store.exists(_PROBE_SESSION)
    except SessionError as error:
        raise FiskError(
            "expose.agent.slack needs a session store it can read, since a thread is a "
            f"conversation, and harness.sessions cannot be read: {error}"
        ) from None
    web = AsyncWebClient(token=tokens.bot, base_url=tokens.api_url or AsyncWebClient.BASE_URL)
    try:
        auth = await web.auth_test()
    except SlackApiError as error:
        raise FiskError(
            f"Slack refused {BOT_TOKEN_VARIABLE} at auth.test ({error.response.get('error')}); "
            "export the app's current bot token"
        ) from None
    except Exception as error:
        raise FiskError(
            f"cannot reach Slack to check {BOT_TOKEN_VARIABLE} with auth.test: "
            f"{error or type(error).__name__}"
        ) from None

    def refused(code: str) -> None:
        # Bound late: the channel is made next, and the first connect happens in its open.
        channel.app_token_refused(code)

    socket = ReportingSocket(
        refused=refused,
        app_token=tokens.app,
        web_client=web,
        logger=logging.getLogger("fisk_ai.serve.slack.socket"),
    )
    channel = SlackChannel(
        web,
        socket,
        resources,
        SlackOptions(
            identity=cfg.identity,
            bot_user=str(auth.get("user_id", "")),
            workers=slack.workers,
            context_lines=slack.context_lines,
            no_progress=slack.no_progress,
            answer_grace=slack.answer_grace,
            max_waiting=slack.max_waiting,
            max_coalesced=slack.max_coalesced,
            edit_interval=edit_interval,
        ),
    )
    try:
        await channel.open()
    except SlackApiError as error:
        await channel.shutdown()
        raise FiskError(
            f"Slack refused {APP_TOKEN_VARIABLE} at apps.connections.open "
            f"({error.response.get('error')}); export the app-level token with the "
            "connections:write scope"
        ) from None
    try:
        yield channel
    finally:
        await channel.shutdown()
