"""Questions in a thread: a message with buttons, answered in time or days later, including on
a worker started after the one that asked; the gate's approval; the Stop button."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from fisk_ai.serve.slack.text import CARRIED_ON, Phase
from fisk_ai.sessions.fold import fold
from fisk_ai.tools.base import ExecDeps, Outcome
from tests.agent.conftest import FakeTool
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.fakes.slack import FakeSlack, Posted
from tests.serve.slack.conftest import ANA, BEN, CHANNEL, StartBot
from tests.serve.slack.question_threads import (
    LONG_GRACE,
    answered,
    gated_tools,
    has_question,
    question,
)

GRACE = "{answer_grace: 50ms}"


async def test_a_question_is_a_message_with_buttons_answered_in_time(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI
) -> None:
    turns = [
        reply(
            tool_use("q1", "ask_human_confirm", {"question": "Purge ORDERS?"}),
            stop_reason="tool_use",
        ),
        reply(text("Purged.")),
    ]
    async with start_bot(turns, settings=LONG_GRACE):
        mention = await slack.mention(CHANNEL, ANA, "purge ORDERS")
        await slack.wait_for(lambda: has_question(slack, mention.ts))
        asked = question(slack, mention.ts)
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: status.text == Phase.WAITING.value)
        assert asked.text.startswith(f"Question for <@{ANA}>")
        assert [b["text"]["text"] for b in asked.buttons] == ["Yes", "No", "Dismiss"]
        await slack.press(asked, asked.button("Yes"), BEN)
        await slack.wait_for(lambda: answered(slack, mention.ts, "Purged."))

    result = model.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and json.loads(result["content"]) == {"confirmed": True}
    assert asked.buttons == []
    assert asked.blocks[-1]["elements"][0]["text"] == "Answered by Ben Cole: yes"


async def test_a_question_answered_after_a_worker_restart_resumes_the_journal(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI
) -> None:
    async with start_bot(
        [
            reply(
                tool_use(
                    "q1",
                    "ask_human_select",
                    {"question": "Which stream?", "options": ["ORDERS", "EVENTS"]},
                ),
                stop_reason="tool_use",
            )
        ],
        settings=GRACE,
    ) as first_worker:
        mention = await slack.mention(CHANNEL, ANA, "clean a stream")
        await slack.wait_for(lambda: has_question(slack, mention.ts))
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        # answer_grace passed: the run let go of the thread, waiting on the answer.
        await slack.wait_for(lambda: status.text == Phase.WAITING.value and not status.buttons)
        store = first_worker.store
    assert len(model.requests) == 1

    async with start_bot([reply(text("Cleaned EVENTS."))], settings=GRACE, store=store):
        asked = question(slack, mention.ts)
        assert "1. ORDERS" in asked.blocks[0]["text"]["text"]
        await slack.press(asked, asked.button("2"), ANA)
        await slack.wait_for(lambda: answered(slack, mention.ts, "Cleaned EVENTS."))
        [session] = await store.list()
        conversation = fold(await store.read(session.run_id))

    assert len(model.requests) == 2
    result = model.requests[1]["messages"][-1]["content"][0]
    assert json.loads(result["content"]) == {"selected": "EVENTS"}
    assert not conversation.deferred
    assert asked.blocks[-1]["elements"][0]["text"] == "Answered by Ana Silva: option 2"


async def test_a_free_text_question_is_answered_by_a_mention(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI
) -> None:
    turns = [
        reply(
            tool_use("q1", "ask_human_input", {"question": "Which subject?"}),
            stop_reason="tool_use",
        ),
        reply(text("Watching orders.>")),
    ]
    async with start_bot(turns, settings=GRACE):
        mention = await slack.mention(CHANNEL, ANA, "watch a subject")
        await slack.wait_for(lambda: has_question(slack, mention.ts))
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: status.text == Phase.WAITING.value and not status.buttons)
        await slack.mention(CHANNEL, ANA, "orders.>", thread_ts=mention.ts)
        await slack.wait_for(
            lambda: (
                answered(slack, mention.ts, "Watching orders.&gt;")
                or answered(slack, mention.ts, "Watching orders.>")
            )
        )

    result = model.requests[1]["messages"][-1]["content"][0]
    assert json.loads(result["content"]) == {"value": "orders.>"}


async def test_a_gated_command_approved_after_the_grace_runs_on_resume(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI, tmp_path: Path
) -> None:
    turns = [
        reply(tool_use("t1", "stream_rm", {"stream": "ORDERS"}), stop_reason="tool_use"),
        reply(text("Removed ORDERS.")),
    ]
    async with start_bot(turns, settings=GRACE, tools=gated_tools(tmp_path)):
        mention = await slack.mention(CHANNEL, ANA, "remove ORDERS")
        await slack.wait_for(lambda: has_question(slack, mention.ts))
        asked = question(slack, mention.ts)
        assert [b["text"]["text"] for b in asked.buttons] == [
            "Approve once",
            "Approve always",
            "Decline",
            "No, and tell the agent why",
        ]
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: not status.buttons and "Stopped" in status.text)
        await slack.press(asked, asked.button("Approve once"), BEN)
        await slack.wait_for(lambda: answered(slack, mention.ts, "Removed ORDERS."))

    result = model.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result.get("is_error") is not True
    assert asked.blocks[-1]["elements"][0]["text"] == "Answered by Ben Cole: approved once"


async def test_stop_parks_the_turn_and_a_mention_carries_on(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI
) -> None:
    release = asyncio.Event()

    async def slow(arguments: str, deps: ExecDeps) -> Outcome:
        await release.wait()
        return Outcome("ORDERS: 3 consumers")

    turns = [
        reply(tool_use("t1", "stream_info", {}), stop_reason="tool_use"),
        reply(text("Carried on.")),
    ]
    async with start_bot(turns, tools=[FakeTool("stream_info", slow)]):
        mention = await slack.mention(CHANNEL, ANA, "do a long thing")
        status = await first_status(slack, mention.ts)
        await slack.wait_for(lambda: status.text == Phase.CALLING_TOOLS.value)
        await slack.press(status, status.button("Stop"), BEN)
        await slack.wait_for(lambda: status.text == Phase.STOPPING.value)
        release.set()
        await slack.wait_for(lambda: status.text.startswith(":stop_button: Stopped."))
        assert len(model.requests) == 1
        await slack.mention(CHANNEL, ANA, "go on", thread_ts=mention.ts)
        await slack.wait_for(lambda: answered(slack, mention.ts, "Carried on."))

    # Everything the thread said is kept: the stopped step's result reaches the model.
    assert len(model.requests) == 2
    sent = json.dumps(model.requests[1]["messages"])
    assert "ORDERS: 3 consumers" in sent and "go on" in sent


async def first_status(slack: FakeSlack, thread_ts: str) -> Posted:
    await slack.wait_for(lambda: bool(slack.bot_messages(CHANNEL, thread_ts)))
    return slack.bot_messages(CHANNEL, thread_ts)[0]


async def test_a_decline_with_a_reason_gives_the_model_the_operators_sentence(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI, tmp_path: Path
) -> None:
    turns = [
        reply(tool_use("t1", "stream_rm", {"stream": "ORDERS"}), stop_reason="tool_use"),
        reply(text("Left ORDERS alone.")),
    ]
    async with start_bot(turns, settings=LONG_GRACE, tools=gated_tools(tmp_path)):
        mention = await slack.mention(CHANNEL, ANA, "remove ORDERS")
        await slack.wait_for(lambda: has_question(slack, mention.ts))
        asked = question(slack, mention.ts)
        await slack.press(asked, asked.button("No, and tell the agent why"), BEN)
        await slack.wait_for(lambda: any(b.get("type") == "input" for b in asked.blocks))
        await slack.type_answer(asked, BEN, "ORDERS holds this week's invoices")
        await slack.wait_for(lambda: answered(slack, mention.ts, "Left ORDERS alone."))

    result = model.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert "ORDERS holds this week's invoices" in json.dumps(result)
    assert asked.blocks[-1]["elements"][0]["text"] == (
        "Answered by Ben Cole: declined: “ORDERS holds this week's invoices”"
    )


async def test_a_late_decline_with_a_reason_reaches_the_model_on_resume(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI, tmp_path: Path
) -> None:
    turns = [
        reply(tool_use("t1", "stream_rm", {"stream": "ORDERS"}), stop_reason="tool_use"),
        reply(text("Left ORDERS alone.")),
    ]
    async with start_bot(turns, settings=GRACE, tools=gated_tools(tmp_path)):
        mention = await slack.mention(CHANNEL, ANA, "remove ORDERS")
        await slack.wait_for(lambda: has_question(slack, mention.ts))
        asked = question(slack, mention.ts)
        status = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: not status.buttons and "Stopped" in status.text)
        await slack.press(asked, asked.button("No, and tell the agent why"), BEN)
        await slack.wait_for(lambda: any(b.get("type") == "input" for b in asked.blocks))
        await slack.type_answer(asked, BEN, "not before the audit")
        await slack.wait_for(lambda: answered(slack, mention.ts, "Left ORDERS alone."))

    result = model.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert "not before the audit" in json.dumps(result)


async def test_a_late_answer_turns_the_waiting_status_into_a_note_that_the_turn_carried_on(
    slack: FakeSlack, start_bot: StartBot
) -> None:
    ask = reply(
        tool_use("q1", "ask_human_confirm", {"question": "Purge ORDERS?"}), stop_reason="tool_use"
    )
    async with start_bot([ask], settings=GRACE) as first_worker:
        mention = await slack.mention(CHANNEL, ANA, "purge ORDERS")
        await slack.wait_for(lambda: has_question(slack, mention.ts))
        waiting = slack.bot_messages(CHANNEL, mention.ts)[0]
        await slack.wait_for(lambda: waiting.text == Phase.WAITING.value and not waiting.buttons)
        store = first_worker.store

    async with start_bot([reply(text("Purged ORDERS."))], settings=GRACE, store=store):
        asked = question(slack, mention.ts)
        await slack.press(asked, asked.button("Yes"), BEN)
        await slack.wait_for(lambda: answered(slack, mention.ts, "Purged ORDERS."))
        await slack.wait_for(lambda: waiting.text == CARRIED_ON)

    statuses = [m.text for m in slack.bot_messages(CHANNEL, mention.ts)]
    assert Phase.WAITING.value not in statuses


async def test_the_stop_acknowledgement_stays_until_the_turn_stops(
    slack: FakeSlack, start_bot: StartBot, model: FakeMessagesAPI
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(arguments: str, deps: ExecDeps) -> Outcome:
        started.set()
        await release.wait()
        return Outcome("ORDERS: 3 consumers")

    calls = [tool_use("t1", "stream_info", {}), tool_use("t2", "stream_report", {})]
    turns = [reply(*calls, stop_reason="tool_use")]
    tools = [FakeTool("stream_info", slow), FakeTool("stream_report")]
    async with start_bot(turns, tools=tools):
        mention = await slack.mention(CHANNEL, ANA, "do a long thing")
        status = await first_status(slack, mention.ts)
        await started.wait()
        await slack.wait_for(lambda: status.text == Phase.CALLING_TOOLS.value)
        await slack.press(status, status.button("Stop"), BEN)
        await slack.wait_for(lambda: status.text == Phase.STOPPING.value)
        release.set()
        await slack.wait_for(lambda: status.text.startswith(":stop_button: Stopped."))

    shown = [*status.edits, status.text]
    after_stop = shown[shown.index(Phase.STOPPING.value) :]
    assert Phase.CALLING_TOOLS.value not in after_stop
