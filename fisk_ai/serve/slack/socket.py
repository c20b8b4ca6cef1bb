"""The socket-mode client the Slack channel listens on, telling the channel when Slack refuses
the app-level token.

slack-sdk asks for a fresh connection address (apps.connections.open) each time it reconnects,
and when Slack refuses the token there it only logs the error and tries again, for ever: a
worker whose app was uninstalled or whose token was revoked would run on, deaf. This client
reports that refusal, so the channel faults and the worker drains and exits non-zero.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient

__all__ = ["AUTH_FAILURES", "ReportingSocket"]

AUTH_FAILURES = frozenset({"invalid_auth", "not_authed", "token_revoked", "account_inactive"})
"""The Web API errors that mean a token is no longer accepted, rather than a passing failure."""


class ReportingSocket(SocketModeClient):
    """A socket-mode client calling ``refused`` with Slack's error when it refuses the app
    token on a (re)connect; the error is raised on as before."""

    def __init__(self, *, refused: Callable[[str], None], **options: Any) -> None:
        super().__init__(**options)
        self._refused = refused

    async def issue_new_wss_url(self) -> str:
        try:
            return await super().issue_new_wss_url()
        except SlackApiError as error:
            code = str(error.response.get("error", ""))
            if code in AUTH_FAILURES:
                self._refused(code)
            raise
