"""Each expose.agent.slack key, as the people in the channel notice it; and a drain."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from fisk_ai.serve.slack.text import DRAINED_BEFORE_START, DRAINED_WHILE_RUNNING, Phase
from fisk_ai.tools.base import ExecDeps, Outcome
from tests.agent.conftest import FakeTool
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.fakes.slack import FakeSlack, Posted
from tests.serve.slack.conftest import ANA, BEN, CHANNEL, StartBot


class Gate:
    """A tool that runs until the test lets it finish, so a turn can be held running."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.tool = FakeTool("stream_info", self._run)

    async def _run(self, arguments: str, deps: ExecDeps) -> Outcome:
        await self.release.wait()
        return Outcome("ORDERS: fine")


@pytest.fixture
def gate() -> Iterator[Gate]:
    yield Gate()


def held_turn(answer: str) -> list[dict[str, object]]:
    return [reply(tool_use("t1", "stream_info", {}), stop_reason="tool_use"), reply(text(answer))]


def status_of(slack: FakeSlack, thread_ts: str) -> Posted:
    return slack.bot_messages(CHANNEL, thread_ts)[0]


def said(slack: FakeSlack, thread_ts: str, words: str) -> bool:
    return any(m.text == words for m in slack.bot_messages(CHANNEL, thread_ts))


def prompt_of(request: dict[str, object]) -> str:
    return json.dumps(request["messages"])


async def test_workers_bounds_the_turns_running_at_once_and_the_rest_show_queued(
    slack: FakeSlack, start_bot: StartBot, gate: Gate
) -> None:
    async with start_bot(
        [*held_turn("first"), reply(text("second"))], settings="{workers: 1}", tools=[gate.tool]
    ):
        first = await slack.mention(CHANNEL, ANA, "one")
        await slack.wait_for(lambda: said(slack, first.ts, Phase.CALLING_TOOLS.value))
        second = await slack.mention(CHANNEL, BEN, "two")
        await slack.wait_for(lambda: said(slack, second.ts, Phase.QUEUED.value))
        gate.release.set()
        await slack.wait_for(lambda: said(slack, second.ts, "second"))

    assert status_of(slack, second.ts).edits[:2] == [Phase.QUEUED.value, Phase.THINKING.value]


async def test_five_workers_by_default_start_a_second_thread_at_once(
    slack: FakeSlack, start_bot: StartBot, gate: Gate
) -> None:
    async with start_bot([*held_turn("first"), reply(text("second"))], tools=[gate.tool]):
        first = await slack.mention(CHANNEL, ANA, "one")
        await slack.wait_for(lambda: said(slack, first.ts, Phase.CALLING_TOOLS.value))
        second = await slack.mention(CHANNEL, BEN, "two")
        # The second thread is answered while the first still runs.
        await slack.wait_for(
            lambda: said(slack, second.ts, "first") or said(slack, second.ts, "second")
        )
        gate.release.set()
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, first.ts)) == 2)

    assert Phase.QUEUED.value not in status_of(slack, second.ts).edits


async def test_max_waiting_refuses_the_next_mention_with_a_short_reply(
    slack: FakeSlack, start_bot: StartBot, gate: Gate
) -> None:
    async with start_bot(
        [*held_turn("first"), reply(text("second"))],
        settings="{workers: 1, max_waiting: 1}",
        tools=[gate.tool],
    ):
        first = await slack.mention(CHANNEL, ANA, "one")
        await slack.wait_for(lambda: said(slack, first.ts, Phase.CALLING_TOOLS.value))
        second = await slack.mention(CHANNEL, BEN, "two")
        await slack.wait_for(lambda: said(slack, second.ts, Phase.QUEUED.value))
        third = await slack.mention(CHANNEL, BEN, "three")
        await slack.wait_for(lambda: bool(slack.bot_messages(CHANNEL, third.ts)))
        gate.release.set()
        await slack.wait_for(lambda: said(slack, second.ts, "second"))

    [busy] = slack.bot_messages(CHANNEL, third.ts)
    assert busy.text.startswith(":hourglass: I'm busy")
    assert "mention me again in a few minutes" in busy.text


async def test_max_coalesced_folds_one_persons_lines_into_one_follow_up_turn(
    slack: FakeSlack, start_bot: StartBot, gate: Gate, model: FakeMessagesAPI
) -> None:
    turns = [*held_turn("first"), reply(text("about a and b")), reply(text("about c"))]
    async with start_bot(turns, settings="{max_coalesced: 2}", tools=[gate.tool]):
        first = await slack.mention(CHANNEL, ANA, "one")
        await slack.wait_for(lambda: said(slack, first.ts, Phase.CALLING_TOOLS.value))
        for line in ("line a", "line b", "line c"):
            await slack.mention(CHANNEL, ANA, line, thread_ts=first.ts)
        await slack.wait_for(lambda: len(slack.called("chat.postMessage")) == 3)
        gate.release.set()
        await slack.wait_for(lambda: said(slack, first.ts, "about c"))

    folded, last = prompt_of(model.requests[2]), prompt_of(model.requests[3])
    assert "line a" in folded and "line b" in folded and "line c" not in folded
    assert "line c" in last and "line b" not in last.split("about a and b")[-1]


async def test_lines_behind_a_turn_that_ends_on_a_question_are_given_back(
    slack: FakeSlack, start_bot: StartBot, gate: Gate
) -> None:
    turns = [
        reply(tool_use("t1", "stream_info", {}), stop_reason="tool_use"),
        reply(tool_use("q1", "ask_human_confirm", {"question": "Go on?"}), stop_reason="tool_use"),
    ]
    async with start_bot(turns, settings="{answer_grace: 50ms}", tools=[gate.tool]):
        first = await slack.mention(CHANNEL, ANA, "one")
        await slack.wait_for(lambda: said(slack, first.ts, Phase.CALLING_TOOLS.value))
        await slack.mention(CHANNEL, ANA, "and another thing", thread_ts=first.ts)
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, first.ts)) == 2)
        gate.release.set()
        await slack.wait_for(
            lambda: said(
                slack,
                first.ts,
                ":leftwards_arrow_with_hook: I did not get to:\n> and another thing",
            )
        )

    assert status_of(slack, first.ts).text == Phase.WAITING.value


async def test_context_lines_bounds_the_conversation_a_turn_reads(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI
) -> None:
    for line in ("oldest remark", "older remark", "latest remark"):
        slack.say(CHANNEL, BEN, line)
    async with start_bot([reply(text("ok"))], settings="{context_lines: 1}"):
        mention = await slack.mention(CHANNEL, ANA, "what was said?")
        await slack.wait_for(lambda: said(slack, mention.ts, "ok"))

    sent = prompt_of(model.requests[0])
    assert "latest remark" in sent
    assert "older remark" not in sent and "oldest remark" not in sent


async def test_context_lines_zero_reads_nothing_around_the_mention(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI
) -> None:
    slack.say(CHANNEL, BEN, "a remark")
    async with start_bot([reply(text("ok"))], settings="{context_lines: 0}"):
        mention = await slack.mention(CHANNEL, ANA, "hi")
        await slack.wait_for(lambda: said(slack, mention.ts, "ok"))

    assert "a remark" not in prompt_of(model.requests[0])
    assert slack.called("conversations.history") == []


async def test_no_progress_posts_the_answer_without_a_status_message(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    async with start_bot([reply(text("the answer"))], settings="{no_progress: true}"):
        mention = await slack.mention(CHANNEL, ANA, "hi")
        await slack.wait_for(lambda: said(slack, mention.ts, "the answer"))

    [answer] = slack.bot_messages(CHANNEL, mention.ts)
    assert answer.buttons == []
    assert slack.called("chat.update") == []


async def test_a_drain_tells_waiting_turns_and_stops_running_ones_where_they_can_carry_on(
    slack: FakeSlack, start_bot: StartBot, gate: Gate
) -> None:
    async with start_bot([*held_turn("never")], settings="{workers: 1}", tools=[gate.tool]) as bot:
        first = await slack.mention(CHANNEL, ANA, "one")
        await slack.wait_for(lambda: said(slack, first.ts, Phase.CALLING_TOOLS.value))
        second = await slack.mention(CHANNEL, BEN, "two")
        await slack.wait_for(lambda: said(slack, second.ts, Phase.QUEUED.value))
        draining = asyncio.ensure_future(bot.hosted.drain())
        await slack.wait_for(lambda: said(slack, second.ts, DRAINED_BEFORE_START))
        late = await slack.mention(CHANNEL, BEN, "three")
        await slack.wait_for(lambda: bool(slack.bot_messages(CHANNEL, late.ts)))
        gate.release.set()
        await draining

    assert status_of(slack, first.ts).text == DRAINED_WHILE_RUNNING
    assert slack.bot_messages(CHANNEL, late.ts)[0].text.startswith(":zzz:")
