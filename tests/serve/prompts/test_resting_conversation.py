"""A served conversation resting between turns reads as completed, the outcome of its last run,
and still takes its next turn."""

from __future__ import annotations

from fisk_ai.a2a.in_process import InProcessTransport
from fisk_ai.a2a.messages import Ack, TerminalResult
from fisk_ai.presentation import session_listing
from fisk_ai.serve.prompts.options import conversation_session_id
from fisk_ai.sessions.fold import fold
from fisk_ai.sessions.records import TerminalReason
from tests.fakes.provider import answer
from tests.serve.prompts.engine import IDENTITY, StartAgent, exchange, prompt


async def test_an_answered_turn_is_listed_completed(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    started = await agent((), (answer("two streams"),))
    ack, *_ = await exchange(caller, prompt("how many streams"))
    assert isinstance(ack, Ack) and ack.conversation_token
    session = conversation_session_id(IDENTITY, ack.conversation_token)

    terminal = fold(await started.store.read(session)).terminal
    assert terminal is not None and terminal.reason is TerminalReason.COMPLETED
    # What fisk session ls prints.
    header, row = session_listing(await started.store.list()).splitlines()
    status = header.index("STATUS")
    assert row.startswith(session)
    assert row[status:].split()[0] == "completed"


async def test_a_completed_conversation_takes_its_next_turn(
    agent: StartAgent, caller: InProcessTransport
) -> None:
    await agent((), (answer("two streams"), answer("still two")))
    ack, *_ = await exchange(caller, prompt("how many streams"))
    assert isinstance(ack, Ack)

    replies = await exchange(caller, prompt("and now", conversation_token=ack.conversation_token))

    assert isinstance(replies[-1], TerminalResult) and replies[-1].text == "still two"
