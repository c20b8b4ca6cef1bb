"""The Slack channel's name and settings, as expose.agent.slack gives them, and the bot it runs
as."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

__all__ = ["CHANNEL_SLACK", "EDIT_INTERVAL", "SlackOptions", "Thread", "slack_session_id"]

CHANNEL_SLACK = "slack"
"""The channel as the banner's Endpoints row and every operator line name it."""

EDIT_INTERVAL = timedelta(seconds=1)
"""The least time between two edits of one thread's status messages: Slack takes edits at
about one a second."""


@dataclass(frozen=True)
class SlackOptions:
    identity: str
    bot_user: str
    """The bot's own user id, as auth.test reports it."""
    workers: int = 5
    context_lines: int = 20
    no_progress: bool = False
    answer_grace: timedelta = timedelta(seconds=30)
    max_waiting: int = 10
    max_coalesced: int = 5
    edit_interval: timedelta = EDIT_INTERVAL
    """Not a configuration key: an embedder may pace the edits otherwise."""


@dataclass(frozen=True)
class Thread:
    """One Slack thread: one conversation."""

    team: str
    channel: str
    ts: str


def slack_session_id(identity: str, thread: Thread) -> str:
    """The journal of a thread: a hash of the serving identity, the team, the channel and the
    thread, so two agents in one workspace keep their conversations apart."""
    key = "\x00".join((identity, thread.team, thread.channel, thread.ts))
    return "s-" + hashlib.sha256(key.encode()).hexdigest()
