"""A question the agent asks in a Slack thread, and its answer."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.tools.base import Tool
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from tests.agent.conftest import ops_model
from tests.fakes.fiskapp import write_fake_app
from tests.fakes.slack import FakeSlack, Posted
from tests.serve.slack.conftest import CHANNEL

LONG_GRACE = "{answer_grace: 1h}"


def question(slack: FakeSlack, thread_ts: str) -> Posted:
    return next(
        m
        for m in slack.bot_messages(CHANNEL, thread_ts)
        if m.buttons and m.text.startswith("Question")
    )


def has_question(slack: FakeSlack, thread_ts: str) -> bool:
    return any(m.text.startswith("Question") for m in slack.bot_messages(CHANNEL, thread_ts))


def answered(slack: FakeSlack, thread_ts: str, words: str) -> bool:
    return any(m.text == words for m in slack.bot_messages(CHANNEL, thread_ts))


def gated_tools(tmp_path: Path) -> tuple[Tool, ...]:
    path = write_fake_app(tmp_path, ops_model(), name="ops")
    return tuple(load_application(ApplicationModel.model_validate(ops_model()), str(path)).tools)
