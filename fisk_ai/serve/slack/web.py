"""The Slack Web API as the channel calls it, and what a failed call means."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError

from fisk_ai.errors import FiskError
from fisk_ai.serve.slack.edits import RateLimited
from fisk_ai.serve.slack.options import Thread
from fisk_ai.serve.slack.socket import AUTH_FAILURES

if TYPE_CHECKING:
    from slack_sdk.web.async_client import AsyncWebClient

__all__ = ["HISTORY_PAGE", "SlackWeb", "TokenRefused"]

HISTORY_PAGE = 200
"""Messages of a thread read in one conversations.replies call."""
_RATE_LIMITED = 429
_DEFAULT_RETRY_AFTER = 1.0

_log = logging.getLogger(__name__)


class TokenRefused(Exception):
    """Slack refused the bot token; ``error`` is the fault the channel stops with."""

    def __init__(self, error: FiskError) -> None:
        super().__init__(str(error))
        self.error = error


class SlackWeb:
    """The bot's calls through ``client``: a failure is logged and answered with an empty
    reply, except that Slack refusing the token calls ``faulted`` and raises ``TokenRefused``."""

    def __init__(self, client: AsyncWebClient, faulted: Callable[[FiskError], None]) -> None:
        self.client = client
        self._faulted = faulted

    async def call(self, method: str, *, paced: bool = False, **arguments: Any) -> dict[str, Any]:
        """One Web API call; a ``paced`` call that Slack finds too fast raises ``RateLimited``
        so its pace backs off."""
        call: Callable[..., Awaitable[Any]] = getattr(self.client, method)
        try:
            reply = await call(**arguments)
        except SlackApiError as error:
            if paced and error.response.status_code == _RATE_LIMITED:
                raise RateLimited(_retry_after(error.response.headers)) from None
            code = str(error.response.get("error", ""))
            self.check_auth(code)
            _log.warning("Slack %s failed: %s", method.replace("_", "."), code)
            return {}
        except Exception as error:
            _log.warning("Slack %s failed: %s", method.replace("_", "."), error)
            return {}
        return dict(reply.data) if isinstance(reply.data, dict) else {}

    async def post(self, thread: Thread, text: str) -> None:
        """A message of the bot's own words in ``thread``."""
        await self.call(
            "chat_postMessage",
            channel=thread.channel,
            thread_ts=thread.ts,
            text=text,
            blocks=[
                {"type": "section", "text": {"type": "plain_text", "text": text, "emoji": True}}
            ],
        )

    async def permalink(self, channel: str, ts: str) -> str:
        reply = await self.call("chat_getPermalink", channel=channel, message_ts=ts)
        return str(reply.get("permalink", "")) if reply else ""

    def check_auth(self, code: str) -> None:
        """Fault the channel when Slack's error ``code`` says the bot token is refused."""
        if code in AUTH_FAILURES:
            error = FiskError(
                f"Slack refused SLACK_BOT_TOKEN ({code}); the worker stops so a supervisor can "
                "restart it with a valid token"
            )
            self._faulted(error)
            raise TokenRefused(error)


def _retry_after(headers: Any) -> float:
    """The seconds a rate-limit answer's Retry-After asks for."""
    values = {str(name).lower(): value for name, value in dict(headers or {}).items()}
    value = values.get("retry-after")
    if isinstance(value, list):
        value = value[0] if value else None
    try:
        return max(0.0, float(str(value)))
    except ValueError:
        return _DEFAULT_RETRY_AFTER
