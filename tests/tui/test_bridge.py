from __future__ import annotations

import asyncio

import pytest
from textual.message import Message

from fisk_ai.agent.events import TextEvent
from fisk_ai.tools.questions import ConfirmQuestion, QuestionInterrupted
from fisk_ai.tui.bridge import EventArrived, QuestionAsked, RunBridge


def attached() -> tuple[RunBridge, list[Message]]:
    bridge = RunBridge()
    posted: list[Message] = []
    bridge.attach(posted.append)
    return bridge, posted


def test_events_arrive_as_messages() -> None:
    bridge, posted = attached()
    bridge.emit(TextEvent("hi"))
    assert isinstance(posted[0], EventArrived)
    assert posted[0].event == TextEvent("hi")


async def test_a_question_is_answered_through_its_future() -> None:
    bridge, posted = attached()
    asking = asyncio.ensure_future(bridge.ask(ConfirmQuestion("sure?")))
    await asyncio.sleep(0)
    question = posted[0]
    assert isinstance(question, QuestionAsked)
    question.answer.set_result(True)
    assert await asking is True


async def test_interrupting_a_question_is_not_an_answer() -> None:
    bridge, _ = attached()
    asking = asyncio.ensure_future(bridge.ask(ConfirmQuestion("sure?")))
    await asyncio.sleep(0)
    bridge.interrupt()
    with pytest.raises(QuestionInterrupted):
        await asking


async def test_only_one_question_is_put_at_a_time() -> None:
    bridge, posted = attached()
    first = asyncio.ensure_future(bridge.ask(ConfirmQuestion("first?")))
    second = asyncio.ensure_future(bridge.ask(ConfirmQuestion("second?")))
    await asyncio.sleep(0)
    assert len(posted) == 1
    assert isinstance(posted[0], QuestionAsked)
    posted[0].answer.set_result(False)
    assert await first is False
    await asyncio.sleep(0)
    assert len(posted) == 2
    assert isinstance(posted[1], QuestionAsked)
    posted[1].answer.set_result(True)
    assert await second is True


def test_a_bridge_nobody_watches_cannot_prompt() -> None:
    assert not RunBridge().can_prompt()
