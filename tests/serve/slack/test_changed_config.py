"""A thread carried on by a worker restarted with another configuration: a changed tool set
does not end it (the turn runs, and the standing approvals are dropped), a changed model does,
and no line of the thread ever tells the people in it to pass a command-line flag."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fisk_ai.serve.slack.text import SETUP_CHANGED
from fisk_ai.sessions.file import FileSessionStore
from tests.agent.conftest import SETTINGS
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.fakes.slack import FakeSlack
from tests.serve.slack.conftest import ANA, CHANNEL, StartBot, status_tool
from tests.serve.slack.question_threads import (
    LONG_GRACE,
    answered,
    gated_tools,
    has_question,
    question,
)


def nothing_says_force(slack: FakeSlack, thread_ts: str) -> bool:
    return all("--force" not in m.text for m in slack.bot_messages(CHANNEL, thread_ts))


async def test_a_thread_carries_on_across_a_changed_tool_set_asking_again_what_was_approved(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI, tmp_path: Path
) -> None:
    store = FileSessionStore(tmp_path / "threads")
    gated = gated_tools(tmp_path)
    first_turn = [
        reply(tool_use("t1", "stream_rm", {"stream": "ORDERS"}), stop_reason="tool_use"),
        reply(text("Removed ORDERS.")),
    ]
    async with start_bot(first_turn, settings=LONG_GRACE, tools=gated, store=store):
        mention = await slack.mention(CHANNEL, ANA, "remove ORDERS")
        await slack.wait_for(lambda: has_question(slack, mention.ts))
        asked = question(slack, mention.ts)
        await slack.press(asked, asked.button("Approve always"), ANA)
        await slack.wait_for(lambda: answered(slack, mention.ts, "Removed ORDERS."))

    next_turn = [
        reply(tool_use("t2", "stream_rm", {"stream": "AUDIT"}), stop_reason="tool_use"),
        reply(text("Removed AUDIT.")),
    ]
    changed_tools = (*gated, status_tool())
    async with start_bot(next_turn, settings=LONG_GRACE, tools=changed_tools, store=store):
        await slack.mention(CHANNEL, ANA, "and AUDIT", thread_ts=mention.ts)
        await slack.wait_for(
            lambda: (
                sum(m.text.startswith("Question") for m in slack.bot_messages(CHANNEL, mention.ts))
                == 2
            )
        )
        asked_again = [
            m for m in slack.bot_messages(CHANNEL, mention.ts) if m.text.startswith("Question")
        ][-1]
        await slack.press(asked_again, asked_again.button("Approve once"), ANA)
        await slack.wait_for(lambda: answered(slack, mention.ts, "Removed AUDIT."))

    assert "AUDIT" in asked_again.text
    assert nothing_says_force(slack, mention.ts)


async def test_a_thread_whose_model_changed_says_to_start_a_new_thread(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI, tmp_path: Path
) -> None:
    store = FileSessionStore(tmp_path / "threads")
    async with start_bot([reply(text("Three streams."))], store=store):
        mention = await slack.mention(CHANNEL, ANA, "how many streams?")
        await slack.wait_for(lambda: answered(slack, mention.ts, "Three streams."))

    other_model = dataclasses.replace(SETTINGS, model="another-model")
    async with start_bot([reply(text("Four."))], store=store, agent=other_model):
        await slack.mention(CHANNEL, ANA, "and now?", thread_ts=mention.ts)
        await slack.wait_for(
            lambda: any(m.text == SETUP_CHANGED for m in slack.bot_messages(CHANNEL, mention.ts))
        )

    assert len(model.requests) == 1
    assert nothing_says_force(slack, mention.ts)
