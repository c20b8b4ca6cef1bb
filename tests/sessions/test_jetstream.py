"""The jetstream session backend against a real nats-server (the embedded broker)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client as NatsClient
from nats.js.api import DiscardPolicy

from fisk_ai.agent.outcome import Completed
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.runner import Runner
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.sessions import (
    Claim,
    FileSessionStore,
    JetStreamSessionStore,
    JournalError,
    JournalGapError,
    JournalLocked,
    MemoryRevisions,
    Payload,
    Record,
    SessionError,
    SessionExists,
    SessionNotFound,
    SessionStatus,
    SessionStore,
    Terminal,
    TerminalReason,
    encode_record,
    fold,
    lookup_backend,
)
from fisk_ai.sessions.jetstream import (
    EXPECTED_LAST_SUBJECT_SEQUENCE,
    EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT,
    MSG_ID,
)
from tests.agent.conftest import FakeTool, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer, call, calls
from tests.sessions.builders import meta, result, turn
from tests.sessions.session_stream import PREFIX, STREAM, session_stream

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)

FIX = (
    "nats --context production stream add FISK_SESSIONS --subjects 'fisk.sessions.>' "
    "--max-msgs-per-subject=1 --discard=new --discard-per-subject"
)


@pytest.fixture
async def broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker(jetstream=True) as running:
        yield running


@pytest.fixture
async def client(broker: EmbeddedBroker) -> AsyncIterator[NatsClient]:
    connection = await broker.connect(name="test")
    yield connection
    await connection.close()


@pytest.fixture
async def store(client: NatsClient) -> JetStreamSessionStore:
    await client.jetstream().add_stream(session_stream())
    return JetStreamSessionStore(STREAM, connection=client, context_name="production")


async def stored_body(client: NatsClient, subject: str) -> bytes:
    message = await client.jetstream().get_last_msg(STREAM, subject)
    return message.data or b""


def assert_one_sentence(text: str) -> None:
    assert "\n" not in text and "Traceback" not in text
    assert text.count(". ") == 0, text


# Binding to the stream.

REFUSED_SHAPES = {
    "two subjects": (
        {"subjects": ["fisk.sessions.>", "other.>"]},
        "listens on 2 subjects",
    ),
    "no wildcard": ({"subjects": ["fisk.sessions.*"]}, "rather than on one wildcard subject"),
    "several messages per subject": ({"max_msgs_per_subject": 5}, "keeps 5 messages per subject"),
    "discard old": (
        {"discard": DiscardPolicy.OLD, "discard_new_per_subject": False},
        "discards old messages",
    ),
    "not per subject": ({"discard_new_per_subject": False}, "per subject"),
    "a max age": ({"max_age": 3600.0}, "expires messages after 3600 s"),
    "a small max message size": ({"max_msg_size": 1024}, "limits a message to 1024 bytes"),
}


@pytest.mark.parametrize("changes, complaint", REFUSED_SHAPES.values(), ids=list(REFUSED_SHAPES))
async def test_a_stream_of_the_wrong_shape_is_refused_with_the_fix(
    client: NatsClient, changes: dict[str, Any], complaint: str
) -> None:
    await client.jetstream().add_stream(session_stream(**changes))
    store = JetStreamSessionStore(STREAM, connection=client, context_name="production")

    with pytest.raises(SessionError) as refused:
        await store.bind()

    message = str(refused.value)
    assert message.startswith(f"stream {STREAM} ")
    assert complaint in message
    assert message.endswith(FIX)
    assert_one_sentence(message.split(": nats ", maxsplit=1)[0])


async def test_a_missing_stream_is_refused_with_the_command_that_creates_it(
    client: NatsClient,
) -> None:
    store = JetStreamSessionStore(STREAM, connection=client, context_name="production")

    with pytest.raises(SessionError) as refused:
        await store.list()

    message = str(refused.value)
    assert message.startswith(f"stream {STREAM} does not exist")
    assert message.endswith(f"create it with: {FIX}")


async def test_the_fix_keeps_the_prefix_of_a_stream_that_has_one(client: NatsClient) -> None:
    await client.jetstream().add_stream(
        session_stream(subjects=["ops.runs.>"], max_msgs_per_subject=3)
    )
    store = JetStreamSessionStore(STREAM, connection=client)

    with pytest.raises(
        SessionError, match=r"nats stream add FISK_SESSIONS --subjects 'ops\.runs\.>'"
    ):
        await store.bind()


async def test_the_subject_prefix_comes_from_the_streams_wildcard(client: NatsClient) -> None:
    await client.jetstream().add_stream(session_stream(subjects=["ops.runs.>"]))
    store = JetStreamSessionStore(STREAM, connection=client)

    journal = await store.create("run-1", meta("run-1"))
    await journal.append(turn(1))
    await journal.close()

    assert json.loads(await stored_body(client, "ops.runs.run-1._meta"))["seq"] == 1
    assert json.loads(await stored_body(client, "ops.runs.run-1.2"))["seq"] == 2


# Appending.


async def test_appended_records_read_back_in_order(store: JetStreamSessionStore) -> None:
    async with await store.create("run-1", meta("run-1")) as journal:
        await journal.append(turn(1, "tu_1"))
        await journal.append(result("tu_1"))
        await journal.append(Terminal(TerminalReason.COMPLETED))

    records = await store.read("run-1")

    assert [record.seq for record in records] == [1, 2, 3, 4]
    assert records[3].payload == Terminal(TerminalReason.COMPLETED)
    assert fold(records).completed


async def test_a_duplicate_record_is_skipped(store: JetStreamSessionStore) -> None:
    async with await store.create("run-1", meta("run-1")) as journal:
        first = await journal.append_record(Record(2, turn(1)))
        again = await journal.append_record(Record(2, turn(1)))

    assert (first.value, again.value) == ("write", "skip")
    assert [record.seq for record in await store.read("run-1")] == [1, 2]


async def test_a_gap_is_refused_and_nothing_is_stored(store: JetStreamSessionStore) -> None:
    async with await store.create("run-1", meta("run-1")) as journal:
        with pytest.raises(JournalGapError):
            await journal.append_record(Record(3, turn(1)))
        assert journal.last_seq == 1

    assert [record.seq for record in await store.read("run-1")] == [1]


async def test_a_second_writer_refuses_the_first(store: JetStreamSessionStore) -> None:
    async with await store.create("run-1", meta("run-1")) as first:
        await first.append(turn(1))
        async with await store.open("run-1") as second:
            await second.append(turn(2))

            with pytest.raises(JournalLocked, match="run-1 in stream FISK_SESSIONS"):
                await first.append(turn(2))
            with pytest.raises(JournalLocked):
                await first.ensure_ours()
            await second.ensure_ours()

    assert [record.seq for record in await store.read("run-1")] == [1, 2, 3]


async def test_a_record_whose_ack_was_lost_is_adopted(
    store: JetStreamSessionStore, client: NatsClient
) -> None:
    journal = await store.create("run-1", meta("run-1"))
    record = Record(2, turn(1))
    # The record landed but its acknowledgement never came back: the journal did not advance.
    await client.jetstream().publish(
        f"{PREFIX}.run-1.2",
        encode_record(record),
        headers={
            MSG_ID: journal.message_id(2),
            EXPECTED_LAST_SUBJECT_SEQUENCE: "1",
            EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT: f"{PREFIX}.run-1.>",
        },
    )

    appended = await journal.append(turn(1))
    await journal.append(turn(2))
    await journal.close()

    assert appended.seq == 2
    assert [record.seq for record in await store.read("run-1")] == [1, 2, 3]


async def test_concurrent_creators_get_one_session_and_one_refusal(
    store: JetStreamSessionStore, client: NatsClient
) -> None:
    other = JetStreamSessionStore(STREAM, connection=client)

    outcomes = await asyncio.gather(
        store.create("run-1", meta("run-1", prompt="mine")),
        other.create("run-1", meta("run-1", prompt="theirs")),
        return_exceptions=True,
    )

    refused = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    assert len(refused) == 1 and isinstance(refused[0], SessionExists)
    assert "fisk session rm run-1" in str(refused[0])
    assert len(await store.read("run-1")) == 1


async def test_creating_a_session_that_exists_is_refused(store: JetStreamSessionStore) -> None:
    await (await store.create("run-1", meta("run-1"))).close()

    with pytest.raises(SessionExists):
        await store.create("run-1", meta("run-1"))


async def test_a_stored_record_is_the_file_journal_line(
    store: JetStreamSessionStore, client: NatsClient, tmp_path: Path
) -> None:
    payloads: list[Payload] = [
        turn(1, "tu_1", text="Checking the stream."),
        result("tu_1", "ORDERS: 3 consumers"),
        Terminal(TerminalReason.SUSPENDED, "stopped by the operator"),
        MemoryRevisions({"notes": 4}),
    ]
    file_store = FileSessionStore(tmp_path / "runs")
    targets: list[SessionStore] = [store, file_store]
    for target in targets:
        async with await target.create("run-1", meta("run-1")) as journal:
            for payload in payloads:
                await journal.append(payload)

    lines = (tmp_path / "runs" / "run-1.json").read_bytes().splitlines()
    subjects = [f"{PREFIX}.run-1._meta"] + [f"{PREFIX}.run-1.{seq}" for seq in range(2, 6)]
    bodies = [await stored_body(client, subject) for subject in subjects]
    assert bodies == lines
    assert await store.read("run-1") == await file_store.read("run-1")


# Reading, listing and removing.


async def test_an_unknown_session_is_not_found(store: JetStreamSessionStore) -> None:
    with pytest.raises(SessionNotFound, match="no session nope in stream FISK_SESSIONS"):
        await store.read("nope")
    with pytest.raises(SessionNotFound):
        await store.open("nope")
    with pytest.raises(SessionNotFound):
        await store.remove("nope")


async def test_the_listing_reports_each_session_newest_first(
    store: JetStreamSessionStore,
) -> None:
    async with await store.create("done-1", meta("done-1", prompt="report")) as journal:
        await journal.append(turn(1))
        await journal.append(Terminal(TerminalReason.COMPLETED))
    async with await store.create("paused-1", meta("paused-1")) as journal:
        await journal.append(Terminal(TerminalReason.SUSPENDED))
        # Records after the terminal one that leave the status alone.
        await journal.append(Claim(by="host-b", claimed=meta().created))
        await journal.append(MemoryRevisions({"notes": 2}))
    async with await store.create("open-1", meta("open-1")) as journal:
        await journal.append(turn(1, "tu_1"))

    summaries = await store.list()

    assert [(s.run_id, s.status) for s in summaries] == [
        ("open-1", SessionStatus.OPEN),
        ("paused-1", SessionStatus.SUSPENDED),
        ("done-1", SessionStatus.COMPLETED),
    ]
    assert (summaries[2].model, summaries[2].first_prompt) == ("claude-sonnet", "report")


async def test_a_removed_session_is_gone(store: JetStreamSessionStore) -> None:
    await (await store.create("run-1", meta("run-1"))).close()
    await (await store.create("run-2", meta("run-2"))).close()

    await store.remove("run-1")

    assert [summary.run_id for summary in await store.list()] == ["run-2"]
    with pytest.raises(SessionNotFound):
        await store.read("run-1")


async def test_removing_a_session_stops_its_writer(store: JetStreamSessionStore) -> None:
    async with await store.create("run-1", meta("run-1")) as journal:
        await store.remove("run-1")

        with pytest.raises(SessionError, match="was removed from stream FISK_SESSIONS"):
            await journal.append(turn(1))


async def test_a_borrowed_connection_is_left_open(
    store: JetStreamSessionStore, client: NatsClient
) -> None:
    async with await store.create("run-1", meta("run-1")):
        pass
    await store.list()

    assert client.is_connected


async def test_a_connection_the_store_opened_is_closed_once_idle(
    store: JetStreamSessionStore, broker: EmbeddedBroker
) -> None:
    opened: list[NatsClient] = []

    async def open_connection() -> NatsClient:
        opened.append(await broker.connect(name="sessions"))
        return opened[-1]

    own = lookup_backend("jetstream")(stream=STREAM, open_connection=open_connection)
    async with await own.create("run-1", meta("run-1")) as journal:
        await journal.append(turn(1))
        await own.read("run-1")
        assert [connection.is_connected for connection in opened] == [True]
    await own.list()

    assert [connection.is_closed for connection in opened] == [True, True]


def test_the_store_describes_its_stream_and_context(store: JetStreamSessionStore) -> None:
    assert store.describe() == f"jetstream, stream {STREAM} via NATS context production"


# A whole run.


def runner(store: JetStreamSessionStore, provider: ScriptedProvider, **kw: Any) -> Runner:
    return Runner(
        Resources(
            AgentSettings(model="test-model", max_iterations=10, max_tokens=100_000),
            provider,
            toolset(FakeTool("status")),
            store,
        ),
        events=RecordingSink(),
        **kw,
    )


async def test_a_run_is_journaled_to_the_stream_and_folds_back(
    store: JetStreamSessionStore,
) -> None:
    provider = ScriptedProvider([calls(call("tu_1", "status")), answer("All green.")])
    async with runner(store, provider) as agent:
        outcome = await agent.start("how is the fleet?")

    conversation = fold(await store.read(outcome.session_id))
    assert isinstance(outcome.outcome, Completed)
    assert conversation.completed
    assert (conversation.llm_calls, conversation.tool_calls) == (2, 1)
    assert conversation.messages[-1].text == "All green."


async def test_a_suspended_run_is_resumed_by_another_worker(
    store: JetStreamSessionStore, broker: EmbeddedBroker
) -> None:
    suspend = asyncio.Event()
    suspend.set()
    async with runner(store, ScriptedProvider(), suspend=suspend) as first:
        session_id = (await first.start("how is the fleet?")).session_id

    connection = await broker.connect(name="second worker")
    try:
        elsewhere = JetStreamSessionStore(STREAM, connection=connection)
        async with runner(elsewhere, ScriptedProvider([answer("All green.")])) as second:
            outcome = await second.resume(session_id)
    finally:
        await connection.close()

    records = await store.read(session_id)
    assert isinstance(outcome.outcome, Completed)
    assert any(isinstance(record.payload, Claim) for record in records)
    assert fold(records).completed


async def test_a_damaged_session_is_listed_as_corrupt_and_refused_when_read(
    store: JetStreamSessionStore, client: NatsClient
) -> None:
    await client.jetstream().publish(f"{PREFIX}.bad-1._meta", b"{not json")

    [summary] = await store.list()

    assert (summary.run_id, summary.status) == ("bad-1", SessionStatus.CORRUPT)
    assert f"{PREFIX}.bad-1._meta is corrupt" in summary.problem
    with pytest.raises(JournalError, match="is corrupt"):
        await store.read("bad-1")
