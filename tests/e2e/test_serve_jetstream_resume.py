"""A turn survives its worker: `fisk serve` killed mid-turn, and a second worker on the same
JetStream session stream continuing it for the caller holding the conversation token. The caller
is a raw nats-py client speaking the user guide's JSON (see tests/e2e/a2a_wire.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fisk_ai.broker.server import locate_server_binary
from tests.e2e.a2a_wire import Site, assert_a_whole_reply_set, blocks, wire_site
from tests.e2e.agent_runs import repeated_model_calls, tool_results
from tests.e2e.session_stream import STREAM, add_session_stream
from tests.fakes.fiskapp import kill_quietly, open_pid_fifo, read_pid, runs_of
from tests.fakes.messages_api import reply, text, tool_use
from tests.patience import DEADLINE

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

SESSIONS_ON_THE_STREAM = (
    f"harness:\n  sessions:\n    backend: jetstream\n    options:\n      stream: {STREAM}\n"
)


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with wire_site(tmp_path, jetstream=True) as made:
        await add_session_stream(made.broker)
        yield made


async def test_a_turn_whose_worker_was_killed_is_resumed_by_another_without_repeating_the_model(
    site: Site,
) -> None:
    site.api.script(
        [
            reply(tool_use("tu_hold", "stream_hold", {}), stop_reason="tool_use"),
            reply(text("the streams are held")),
        ]
    )
    config = site.config(extra=SESSIONS_ON_THE_STREAM)
    pid_fifo = open_pid_fifo(site.hold_pid)
    async with site.peer() as peer:
        async with site.worker(config, "first") as first:
            inbox = await peer.send(
                peer.message("request.prompt", request="hold1", prompt="hold the streams")
            )
            pid = await read_pid(pid_fifo, within=DEADLINE)
            try:
                before = await inbox.until("event.tool_call")
                first.process.kill()
                await first.process.wait()
            finally:
                kill_quietly(pid)
        token = before[0].document["conversation_token"]

        async with site.worker(config, "second") as second:
            resumed = await (
                await peer.send(
                    peer.message("request.resume", request="resume1", conversation_token=token)
                )
            ).through_terminal()

    assert not any(reply.is_terminal for reply in before)
    assert_a_whole_reply_set(resumed)
    assert resumed[0].document["accepted"] is True
    ended = resumed[-1].document
    assert resumed[-1].kind == "result", (ended, second.errors())
    assert ended["text"] == "the streams are held"
    assert ended["usage"]["llm_calls"] == 2
    assert [block["call_id"] for block in blocks(resumed, "tool_result")] == ["tu_hold"]
    # The model was asked once by each worker, and never the same thing twice; only the tool
    # whose result the first worker never recorded ran again.
    assert len(site.api.requests) == 2
    assert repeated_model_calls(site.api.requests) == []
    assert list(tool_results(site.api.requests[1])) == ["tu_hold"]
    assert runs_of(site.runs_log) == [["stream_hold"], ["stream_hold"]]
