"""A mention in Slack, as the people in the thread see it: the status message edited while the
run works, the answer as a message of its own with the status turned into a link, the cut, the
speaker prefixes, and a thread carried on as one conversation."""

from __future__ import annotations

import asyncio
import json

import pytest

from fisk_ai.serve.slack.text import ANSWER_LIMIT, CUT_NOTE, Phase
from fisk_ai.sessions.fold import fold
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.fakes.slack import BOT_USER, FakeSlack, Posted
from tests.serve.slack.conftest import ANA, BEN, CHANNEL, StartBot, status_tool


def last_bot_message(slack: FakeSlack, thread_ts: str) -> Posted:
    return slack.bot_messages(CHANNEL, thread_ts)[-1]


async def test_a_mention_is_answered_in_its_thread_with_the_status_linking_to_it(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    async with start_bot([reply(text("Three streams have no consumers."))]):
        mention = await slack.mention(CHANNEL, ANA, "which streams have no consumers?")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 2)
        status, answer = slack.bot_messages(CHANNEL, mention.ts)
        await slack.wait_for(lambda: status.blocks and status.blocks[0]["text"]["type"] == "mrkdwn")

    assert answer.text == "Three streams have no consumers."
    assert answer.blocks == [{"type": "markdown", "text": "Three streams have no consumers."}]
    assert answer.thread_ts == mention.ts
    assert status.edits[0] == Phase.THINKING.value
    link = status.blocks[0]["text"]["text"]
    assert link.startswith("<https://fake.slack.test/archives/C0GENERAL/p") and "Answered" in link
    assert status.buttons == []
    assert mention.ts.replace(".", "") not in link and answer.ts.replace(".", "") in link


async def test_the_status_names_the_family_of_tools_being_run(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI
) -> None:
    turns = [
        reply(tool_use("t1", "stream_info", {}), stop_reason="tool_use"),
        reply(text("ORDERS is fine.")),
    ]
    async with start_bot(turns, tools=[status_tool()]):
        mention = await slack.mention(CHANNEL, ANA, "is ORDERS healthy?")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 2)
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: "Answered" in status.text)

    assert status.edits[:2] == [Phase.THINKING.value, Phase.CALLING_TOOLS.value]
    assert "stream_info" not in " ".join(status.edits)
    assert status.blocks[0]["text"]["type"] == "mrkdwn"


async def test_a_long_answer_is_cut_at_twelve_thousand_bytes_with_a_note(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    long_answer = "é" * 9000  # 18,000 bytes
    async with start_bot([reply(text(long_answer))]):
        mention = await slack.mention(CHANNEL, ANA, "write a lot")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 2)

    answer = slack.bot_messages(CHANNEL, mention.ts)[1]
    assert len(answer.text.encode()) <= ANSWER_LIMIT
    assert answer.text.endswith(CUT_NOTE)
    assert answer.text.startswith("é" * 5000)


async def test_every_line_the_model_reads_is_prefixed_with_its_speaker(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI
) -> None:
    slack.say(CHANNEL, BEN, "disk climbed after the deploy")
    async with start_bot([reply(text("Looking.")), reply(text("Still fine."))]):
        mention = await slack.mention(CHANNEL, ANA, "what happened?")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 2)
        slack.say(CHANNEL, BEN, "and memory too", thread_ts=mention.ts)
        await slack.mention(CHANNEL, BEN, "anything else?", thread_ts=mention.ts)
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 4)

    first = model.requests[0]["messages"][0]["content"]
    first_text = first if isinstance(first, str) else first[0]["text"]
    assert "Ben Cole <@U0LM3D6TP>: disk climbed after the deploy" in first_text
    assert first_text.endswith("Ana Silva <@U024BE7LH>: what happened?")
    follow_up = model.requests[1]["messages"]
    # The thread is one conversation: the second turn carries the first.
    assert len(follow_up) == 3
    last = follow_up[-1]["content"]
    last_text = last if isinstance(last, str) else last[-1]["text"]
    assert "Ben Cole <@U0LM3D6TP>: and memory too" in last_text
    assert last_text.endswith("Ben Cole <@U0LM3D6TP>: anything else?")
    assert f"<@{BOT_USER}>" not in last_text


async def test_a_thread_is_one_journal_with_the_caller_recorded(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    async with start_bot([reply(text("one")), reply(text("two"))]) as bot:
        mention = await slack.mention(CHANNEL, ANA, "first")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 2)
        await slack.mention(CHANNEL, ANA, "second", thread_ts=mention.ts)
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 4)
        sessions = await bot.store.list()

    assert len(sessions) == 1
    records = await bot.store.read(sessions[0].run_id)
    conversation = fold(records)
    assert conversation.meta.caller == "ana.silva (U024BE7LH)"
    assert sessions[0].run_id.startswith("s-")


async def test_two_threads_are_two_conversations(slack: FakeSlack, start_bot: StartBot) -> None:
    async with start_bot([reply(text("a")), reply(text("b"))]) as bot:
        first = await slack.mention(CHANNEL, ANA, "one")
        second = await slack.mention(CHANNEL, BEN, "two")
        await slack.wait_for(
            lambda: (
                len(slack.bot_messages(CHANNEL, first.ts)) == 2
                and len(slack.bot_messages(CHANNEL, second.ts)) == 2
            )
        )
        sessions = await bot.store.list()
    assert len(sessions) == 2


async def test_acks_every_envelope(slack: FakeSlack, start_bot: StartBot) -> None:
    async with start_bot([reply(text("ok"))]):
        await slack.mention(CHANNEL, ANA, "hello")
        await slack.wait_for(lambda: len(slack.acks) == 1)
        await asyncio.sleep(0)
    assert slack.acks == ["env-1"]


async def test_without_users_read_a_speaker_is_named_by_id_and_a_warning_logged(
    slack: FakeSlack,
    start_bot: StartBot,
    model: FakeMessagesAPI,
    caplog: pytest.LogCaptureFixture,
) -> None:
    slack.missing_scopes.add("users:read")
    async with start_bot([reply(text("hi"))]):
        mention = await slack.mention(CHANNEL, ANA, "hello")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 2)

    assert "U024BE7LH <@U024BE7LH>: hello" in json.dumps(model.requests[0]["messages"])
    warnings = [r.getMessage() for r in caplog.records if "users.info" in r.getMessage()]
    assert len(warnings) == 1 and "grant users:read" in warnings[0]


async def test_a_speaker_slack_does_not_know_is_named_by_id_without_advice_about_scopes(
    slack: FakeSlack,
    start_bot: StartBot,
    model: FakeMessagesAPI,
    caplog: pytest.LogCaptureFixture,
) -> None:
    stranger = "U0STRANGER"
    async with start_bot([reply(text("hi"))]):
        mention = await slack.mention(CHANNEL, stranger, "hello")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 2)

    assert f"{stranger} <@{stranger}>: hello" in json.dumps(model.requests[0]["messages"])
    warnings = [r.getMessage() for r in caplog.records if "users.info" in r.getMessage()]
    assert len(warnings) == 1 and "user_not_found" in warnings[0]
    assert "users:read" not in warnings[0]
