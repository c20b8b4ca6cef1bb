"""The people of a Slack workspace as a turn's prompt and a question's answer name them."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

from fisk_ai.serve.slack.web import SlackWeb

__all__ = ["People"]

_MISSING_SCOPE = "missing_scope"

_log = logging.getLogger(__name__)


class People:
    """Names of Slack users, asked of users.info through ``web`` once each."""

    def __init__(self, web: SlackWeb) -> None:
        self._web = web
        self._names: dict[str, tuple[str, str]] = {}

    async def name(self, user: str) -> tuple[str, str]:
        """A person's handle and the name a line is prefixed with: the real name, then the
        display name, then the handle, then the user id."""
        known = self._names.get(user)
        if known is not None:
            return known
        handle, name = user, user
        try:
            reply = await self._web.client.users_info(user=user)
            found = reply.get("user") or {}
            profile = found.get("profile") or {}
            handle = str(found.get("name") or user)
            name = str(profile.get("real_name") or profile.get("display_name") or handle)
        except SlackApiError as error:
            code = str(error.response.get("error", ""))
            self._web.check_auth(code)
            advice = "; grant users:read" if code == _MISSING_SCOPE else ""
            _log.warning(
                "Slack user %s is named by id only: users.info failed (%s)%s", user, code, advice
            )
        except Exception as error:
            _log.warning("Slack user %s is named by id only: %s", user, error)
        self._names[user] = (handle, name)
        return handle, name

    async def speaker(self, user: str) -> str:
        """The name ``user``'s lines are prefixed with."""
        return (await self.name(user))[1]

    async def spoken(self, user: str, text: str) -> str:
        """``text`` as ``user`` said it, in a prompt."""
        name = await self.speaker(user)
        return f"{name} <@{user}>: {text}"
