"""Two resumes of one conversation at once, on both session backends under one contract: of two
runs that read the same journal, exactly one claims it and runs the call it left pending; the
other stops before it runs anything, with one sentence.

The seam is the records a resume is given: both resumers read the journal first (as two workers
taking the same redelivered job do), then each claims it. Against JetStream the file lock's
protection is absent, so only the claim's condition keeps the second from running the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from fisk_ai.agent.loop import AgentError
from fisk_ai.agent.outcome import Completed
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.sessions import (
    Claim,
    FileSessionStore,
    JetStreamSessionStore,
    JournalLocked,
    SessionError,
    SessionStore,
    fold,
)
from fisk_ai.sessions.records import Timestamp
from fisk_ai.tools.base import ExecDeps, Outcome
from tests.agent.conftest import SETTINGS, FakeTool, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.sessions.session_stream import STREAM, session_stream

ROUNDS = 4
"""Races per test; each takes a fresh conversation, and the winner alternates between them."""


class Killed(BaseException):
    """The process serving the first run died mid-call, leaving the call pending."""


@dataclass
class Deploy:
    """The pending call's tool: the first run dies in it. The first resume to run it holds in
    it until the test releases it, so the test knows that run's claim is written; any further
    run returns at once, so a race lost the wrong way ends (and fails) rather than hangs."""

    dying: bool = True
    started: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    runs: int = 0

    async def __call__(self, arguments: str, deps: ExecDeps) -> Outcome:
        if self.dying:
            raise Killed
        self.runs += 1
        if self.runs == 1:
            self.started.set()
            await self.release.wait()
        return Outcome("deployed")


Backend = FileSessionStore | JetStreamSessionStore
Stores = tuple[Backend, Backend]


@pytest.fixture(params=["file", "jetstream"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    """Two workers' views of one session store: two stores over one directory, or two
    connections to one stream."""
    if request.param == "file":
        yield FileSessionStore(tmp_path / "runs"), FileSessionStore(tmp_path / "runs")
        return
    if locate_server_binary() is None:
        pytest.skip("no nats-server binary on this machine")
    async with EmbeddedBroker(jetstream=True) as broker:
        connections: list[NatsClient] = [await broker.connect(name=f"worker {n}") for n in (1, 2)]
        try:
            await connections[0].jetstream().add_stream(session_stream())
            yield (
                JetStreamSessionStore(STREAM, connection=connections[0]),
                JetStreamSessionStore(STREAM, connection=connections[1]),
            )
        finally:
            for connection in connections:
                await connection.close()


def runner(store: SessionStore, deploy: Deploy, *replies: object) -> Runner:
    return Runner(
        Resources(
            SETTINGS,
            ScriptedProvider(list(replies)),  # type: ignore[arg-type]
            toolset(FakeTool("deploy", deploy)),
            store,
        ),
        events=RecordingSink(),
    )


async def pending_call(store: SessionStore, deploy: Deploy) -> str:
    """A conversation whose journal ends on a call to deploy that never finished."""
    first = runner(store, deploy, calls(call("t1", "deploy")))
    with pytest.raises(Killed):
        await first.start("deploy the release")
    session_id = first.session_id
    await first.close()
    deploy.dying = False
    return session_id


def assert_one_sentence(text: str) -> None:
    assert text and "\n" not in text and "Traceback" not in text, text
    assert text.count(". ") == 0, text


async def test_a_resume_that_read_the_journal_before_another_claimed_it_runs_nothing(
    stores: Stores,
) -> None:
    for round_number in range(ROUNDS):
        winner_store, loser_store = stores if round_number % 2 == 0 else stores[::-1]
        deploy = Deploy()
        session_id = await pending_call(winner_store, deploy)
        read_by_winner = await winner_store.read(session_id)
        read_by_loser = await loser_store.read(session_id)

        winner = runner(winner_store, deploy, answer("released"))
        winning = asyncio.ensure_future(winner.resume(session_id, records=read_by_winner))
        await deploy.started.wait()
        loser = runner(loser_store, deploy)
        try:
            with pytest.raises(JournalLocked) as lost:
                await loser.resume(session_id, records=read_by_loser)
        finally:
            deploy.release.set()
            result = await winning
            await winner.close()
            await loser.close()

        assert isinstance(result.outcome, Completed)
        assert deploy.runs == 1, f"round {round_number}: the pending call ran {deploy.runs} times"
        assert_one_sentence(str(lost.value))
        records = await winner_store.read(session_id)
        assert sum(isinstance(record.payload, Claim) for record in records) == 1
        assert fold(records).completed


async def test_two_resumes_released_together_run_the_pending_call_once(stores: Stores) -> None:
    for round_number in range(ROUNDS):
        deploy = Deploy()
        session_id = await pending_call(stores[0], deploy)
        read = [await store.read(session_id) for store in stores]
        resumers = [runner(store, deploy, answer("released")) for store in stores]
        pairs = list(zip(resumers, read, strict=True))
        if round_number % 2:
            pairs.reverse()

        tasks = [
            asyncio.ensure_future(agent.resume(session_id, records=records))
            for agent, records in pairs
        ]
        # The winner holds in the call, so the first to end is the resume that lost.
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        deploy.release.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for agent in resumers:
            await agent.close()

        losses = [result for result in results if isinstance(result, SessionError | AgentError)]
        wins = [result for result in results if not isinstance(result, BaseException)]
        assert deploy.runs == 1, f"round {round_number}: the pending call ran {deploy.runs} times"
        assert (len(wins), len(losses)) == (1, 1), results
        assert_one_sentence(str(losses[0]))
        records = await stores[0].read(session_id)
        assert sum(isinstance(record.payload, Claim) for record in records) == 1
        assert fold(records).completed


async def test_of_two_claims_on_one_read_exactly_one_takes_the_journal(stores: Stores) -> None:
    deploy = Deploy()
    session_id = await pending_call(stores[0], deploy)
    read = [await store.read(session_id) for store in stores]

    first = await stores[0].open(session_id, read_seq=read[0][-1].seq)
    try:
        await first.append(Claim(by="first", claimed=Timestamp.now_utc()))
        with pytest.raises(JournalLocked) as lost:
            second = await stores[1].open(session_id, read_seq=read[1][-1].seq)
            await second.close()
    finally:
        await first.close()

    assert_one_sentence(str(lost.value))
    assert f"session {session_id}" in str(lost.value)


async def test_a_claim_on_the_journal_as_it_stands_is_taken(stores: Stores) -> None:
    deploy = Deploy()
    session_id = await pending_call(stores[0], deploy)
    records = await stores[1].read(session_id)

    async with await stores[1].open(session_id, read_seq=records[-1].seq) as journal:
        assert journal.last_seq == records[-1].seq
