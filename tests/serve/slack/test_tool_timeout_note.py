"""A tool that ran out of time on the way to an answer gets one sentence under the answer,
naming the kind of problem and nothing the tool returned."""

from __future__ import annotations

from fisk_ai.tools.base import ExecDeps, Outcome
from tests.agent.conftest import FakeTool
from tests.fakes.messages_api import reply, text, tool_use
from tests.fakes.slack import FakeSlack
from tests.serve.slack.conftest import ANA, CHANNEL, StartBot

NOTE = ":warning: A tool ran out of time on the way to this answer."


async def stopped_at_its_limit(arguments: str, deps: ExecDeps) -> Outcome:
    return Outcome(
        'the command "slow -- 5" did not finish within 1s (harness.tool_timeout) and was stopped',
        is_error=True,
        timed_out=True,
    )


async def test_a_tool_that_ran_out_of_time_is_noted_under_the_answer(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    turns = [
        reply(tool_use("t1", "slow", {}), stop_reason="tool_use"),
        reply(text("The check did not finish.")),
    ]
    async with start_bot(turns, tools=[FakeTool("slow", stopped_at_its_limit)]):
        mention = await slack.mention(CHANNEL, ANA, "run the slow check")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 3)

    _, answer, note = slack.bot_messages(CHANNEL, mention.ts)
    assert answer.text == "The check did not finish."
    assert note.text == NOTE


async def test_a_tool_that_failed_in_time_gets_no_timeout_note(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    async def failed(arguments: str, deps: ExecDeps) -> Outcome:
        return Outcome("the stream does not exist", is_error=True)

    turns = [
        reply(tool_use("t1", "slow", {}), stop_reason="tool_use"),
        reply(text("No such stream.")),
    ]
    async with start_bot(turns, tools=[FakeTool("slow", failed)]):
        mention = await slack.mention(CHANNEL, ANA, "run the slow check")
        await slack.wait_for(lambda: len(slack.bot_messages(CHANNEL, mention.ts)) == 2)
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: "Answered" in status.text)

    assert [m.text for m in slack.bot_messages(CHANNEL, mention.ts)][1:] == ["No such stream."]
