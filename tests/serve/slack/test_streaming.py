"""The answer growing in the status message while the model writes it, as a thread shows it:
streamed by the fake Messages API in pieces, held part way with ``pause``, and edited in at
Slack's pace of one edit a second."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator

import pytest

from fisk_ai.serve.slack.options import EDIT_INTERVAL
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, thinking
from tests.fakes.slack import Posted
from tests.serve.slack.conftest import ANA, CHANNEL, PacingSlack, StartBot

ANSWER = "Three streams have no consumers: ORDERS, AUDIT and EVENTS."
RETRIED = "Two streams have no consumers: AUDIT and EVENTS."
PIECE = 8
AFTER_FIRST_PIECE = 4
"""Stream events up to the first text piece: message_start, ping, content_block_start, delta."""


def writing(status: Posted) -> str:
    """The answer being written, as the status message shows it."""
    return "".join(block["text"] for block in status.blocks if block.get("type") == "markdown")


@pytest.fixture
def releases() -> Iterator[list[threading.Event]]:
    """Every paused stream is let go at the end, so the fake's thread never hangs."""
    held: list[threading.Event] = []
    yield held
    for release in held:
        release.set()


def answers(slack: PacingSlack, thread_ts: str, answer: str) -> list[Posted]:
    return [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.text == answer]


async def test_the_status_shows_a_prefix_of_the_answer_before_the_call_ends(
    slack: PacingSlack,
    start_bot: StartBot,
    model: FakeMessagesAPI,
    releases: list[threading.Event],
) -> None:
    releases.append(model.pause(1, after=AFTER_FIRST_PIECE))
    async with start_bot([reply(text(ANSWER), chunk=PIECE)], edit_interval=EDIT_INTERVAL):
        mention = await slack.mention(CHANNEL, ANA, "which streams have no consumers?")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 1)
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: writing(status) == ANSWER[:PIECE])
        posted_while_writing = len(slack.bot_messages(CHANNEL, mention.ts))
        releases[0].set()
        await slack.wait_for(lambda: "Answered" in status.text)

    assert posted_while_writing == 1
    assert status.buttons == [] and writing(status) == ""
    assert [m.text for m in answers(slack, mention.ts, ANSWER)] == [ANSWER]


async def test_the_answer_is_posted_once_and_no_edit_of_the_status_follows_but_its_link(
    slack: PacingSlack, start_bot: StartBot
) -> None:
    async with start_bot([reply(text(ANSWER), chunk=2)], edit_interval=EDIT_INTERVAL):
        mention = await slack.mention(CHANNEL, ANA, "which streams have no consumers?")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 2)
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: "Answered" in status.text)

    answer = answers(slack, mention.ts, ANSWER)
    assert len(answer) == 1
    posted_at = next(
        i
        for i, call in enumerate(slack.calls)
        if call.method == "chat.postMessage" and call.args.get("text") == ANSWER
    )
    edits_after = [
        call
        for call in slack.calls[posted_at:]
        if call.method == "chat.update" and call.args.get("ts") == status.ts
    ]
    assert len(edits_after) == 1
    assert answer[0].ts.replace(".", "") in edits_after[0].args["blocks"][0]["text"]["text"]


async def test_a_retried_call_starts_the_growing_text_over(
    slack: PacingSlack,
    start_bot: StartBot,
    model: FakeMessagesAPI,
    releases: list[threading.Event],
) -> None:
    releases.append(model.pause(1, after=AFTER_FIRST_PIECE))
    releases.append(model.pause(2, after=AFTER_FIRST_PIECE))
    turns = [
        reply(text(ANSWER), chunk=PIECE, cut_after=AFTER_FIRST_PIECE + 2),
        reply(text(RETRIED), chunk=PIECE),
    ]
    async with start_bot(turns, edit_interval=EDIT_INTERVAL, retries=1):
        mention = await slack.mention(CHANNEL, ANA, "which streams have no consumers?")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 1)
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: writing(status) == ANSWER[:PIECE])
        releases[0].set()
        await slack.wait_for(lambda: writing(status) == RETRIED[:PIECE])
        releases[1].set()
        await slack.wait_for(lambda: "Answered" in status.text)

    assert [m.text for m in answers(slack, mention.ts, RETRIED)] == [RETRIED]
    assert answers(slack, mention.ts, ANSWER) == []


async def test_an_edit_slack_finds_too_fast_is_put_off_and_sent_again(
    slack: PacingSlack,
    start_bot: StartBot,
    model: FakeMessagesAPI,
    releases: list[threading.Event],
) -> None:
    slack.too_fast.append(1)
    releases.append(model.pause(1, after=AFTER_FIRST_PIECE))
    async with start_bot([reply(text(ANSWER), chunk=PIECE)], edit_interval=EDIT_INTERVAL):
        mention = await slack.mention(CHANNEL, ANA, "which streams have no consumers?")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 1)
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: slack.refused_edits)
        await slack.wait_for(lambda: writing(status) == ANSWER[:PIECE])
        posted_while_writing = len(slack.bot_messages(CHANNEL, mention.ts))
        releases[0].set()
        await slack.wait_for(lambda: "Answered" in status.text)

    assert posted_while_writing == 1
    assert ANSWER[:PIECE] in str(slack.refused_edits[0]["blocks"])
    assert [m.text for m in answers(slack, mention.ts, ANSWER)] == [ANSWER]


async def test_the_thinking_behind_an_answer_is_never_shown_in_the_thread(
    slack: PacingSlack,
    start_bot: StartBot,
    model: FakeMessagesAPI,
    releases: list[threading.Event],
) -> None:
    thought = "Count the streams without consumers first."
    # The thinking block's start, its pieces, its signature and its stop.
    thinking_events = 1 + math.ceil(len(thought) / PIECE) + 1 + 1
    releases.append(model.pause(1, after=AFTER_FIRST_PIECE + thinking_events))
    turn = reply(thinking(thought, "sig-1"), text(ANSWER), chunk=PIECE)
    async with start_bot([turn], edit_interval=EDIT_INTERVAL):
        mention = await slack.mention(CHANNEL, ANA, "which streams have no consumers?")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 1)
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: writing(status) == ANSWER[:PIECE])
        releases[0].set()
        await slack.wait_for(lambda: "Answered" in status.text)

    sent = str([call.args for call in slack.calls if call.method.startswith("chat.")])
    assert thought[:PIECE] not in sent
