"""`fisk serve` answering prompts as the user guide documents the wire: the installed command
against a real nats-server, a caller speaking raw JSON through nats-py, and nothing of our own
client library between them. Every message the worker sends is checked against the upstream
schemas as it arrives (see tests/e2e/a2a_wire.py)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.broker.server import locate_server_binary
from tests.a2a.upstream_schemas import UPSTREAM
from tests.a2a.user_guide_requests import FIRST_PROMPT, FOLLOW_UP, READ
from tests.e2e.a2a_wire import (
    CALLER,
    IDENTITY,
    WAIT,
    Reply,
    Site,
    WirePeer,
    assert_a_whole_reply_set,
    blocks,
    upstream_schema_errors,
    wire_site,
)
from tests.fakes.fiskapp import kill_quietly, open_pid_fifo, read_pid, release, runs_of
from tests.fakes.messages_api import reply, text, tool_use

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        locate_server_binary() is None, reason="no nats-server binary on this machine"
    ),
]

TOKEN = re.compile(r"[A-Za-z0-9_-]{1,128}")
GUIDE_TOKEN = "3Hzmp8VqrKL42NmXcPd7bTgWfR1"
OVER_THE_SIZE_CAP = 800 * 1024


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with wire_site(tmp_path) as made:
        yield made


def prompt(peer: WirePeer, request: str, text: str, **fields: Any) -> dict[str, Any]:
    return peer.message("request.prompt", request=request, prompt=text, **fields)


def turn_of(replies: list[Reply], request: str) -> list[Reply]:
    return [reply for reply in replies if reply.document["request"] == request]


async def finished_conversation(site: Site, peer: WirePeer, request: str) -> list[Reply]:
    """A turn that listed the streams and answered, start to end."""
    site.api.script(
        [
            reply(tool_use("tu_ls", "stream_ls", {}), stop_reason="tool_use"),
            reply(text("there are 3 streams")),
        ]
    )
    inbox = await peer.send(prompt(peer, request, "how many streams are there"))
    replies = await inbox.through_terminal()
    assert replies[-1].kind == "result", replies[-1].body
    return replies


async def test_an_approval_answered_over_nats_runs_the_gated_command(site: Site) -> None:
    site.api.script(
        [
            reply(tool_use("tu_rm", "stream_rm", {}), stop_reason="tool_use"),
            reply(text("removed ORDERS")),
        ]
    )
    async with site.worker(site.config()), site.peer() as peer:
        inbox = await peer.send(prompt(peer, "rm1", "remove the ORDERS stream"))
        before = await inbox.until("elicit.request.approve")
        question = before[-1].document
        assert (question["tool_use_id"], question["command"], question["tag"]) == (
            "tu_rm",
            "stream_rm",
            "ai:confirm",
        )
        assert question["wait_ms"] == 30_000
        assert question["recipient"] == {"name": CALLER}
        assert runs_of(site.runs_log) == []

        answered = await peer.ask(
            peer.elicit_subject("rm1"),
            peer.message(
                "elicit.reply.approve",
                request="rm1",
                question_id=question["question_id"],
                choice="once",
            ),
        )
        after = await inbox.through_terminal()

    assert (answered.kind, answered.document["accepted"]) == ("ack", True)
    replies = before + after
    assert_a_whole_reply_set(replies)
    assert [call["id"] for call in blocks(replies, "tool_call")] == ["tu_rm"]
    [result] = blocks(replies, "tool_result")
    assert result["call_id"] == "tu_rm" and not result.get("is_error")
    assert json.loads(result["output"])["argv"] == ["stream_rm"]
    assert replies[-1].document["text"] == "removed ORDERS"
    assert runs_of(site.runs_log) == [["stream_rm"]]


async def test_an_approval_left_unanswered_ends_the_run_suspended(site: Site) -> None:
    site.api.script(
        [
            reply(tool_use("tu_rm", "stream_rm", {}), stop_reason="tool_use"),
            reply(text("never asked for")),
        ]
    )
    async with site.worker(site.config(request_timeout="1s")), site.peer() as peer:
        inbox = await peer.send(prompt(peer, "rm1", "remove the ORDERS stream"))
        replies = await inbox.through_terminal()

    assert_a_whole_reply_set(replies)
    [question] = [reply.document for reply in replies if reply.kind == "elicit.request.approve"]
    assert question["wait_ms"] == 1000
    ended = replies[-1].document
    assert replies[-1].kind == "error", ended
    assert (ended["code"], ended["stop_reason"]) == ("suspended", "suspended")
    assert ended["usage"]["llm_calls"] == 1
    assert blocks(replies, "tool_result") == []
    assert runs_of(site.runs_log) == []
    assert len(site.api.requests) == 1


async def test_a_cancel_during_a_slow_tool_ends_the_reply_set_suspended_and_nothing_follows(
    site: Site,
) -> None:
    site.api.script(
        [
            reply(tool_use("tu_hold", "stream_hold", {}), stop_reason="tool_use"),
            reply(text("never asked for")),
        ]
    )
    pid_fifo = open_pid_fifo(site.hold_pid)
    async with site.worker(site.config()), site.peer() as peer:
        inbox = await peer.send(prompt(peer, "hold1", "hold the streams"))
        pid = await read_pid(pid_fifo, within=WAIT)
        try:
            canceled = await peer.ask(
                peer.cancel_subject("hold1"),
                peer.message("cancel", request="hold1", reason="not now"),
            )
            release(pid)
            replies = await inbox.through_terminal()
        finally:
            kill_quietly(pid)
        token = replies[0].document["conversation_token"]
        # The worker publishes on one connection, so a read answered on the same inbox arrives
        # after anything the canceled turn could still have sent.
        await inbox.publish(
            peer.task_subject,
            peer.message("request.read", request="read1", conversation_token=token, replay=1),
        )
        later = await inbox.through_terminal()

    assert (canceled.kind, canceled.document["accepted"]) == ("ack", True)
    assert_a_whole_reply_set(replies)
    ended = replies[-1].document
    assert replies[-1].kind == "error", ended
    assert (ended["code"], ended["stop_reason"]) == ("suspended", "suspended")
    assert ended["usage"]["llm_calls"] == 1
    assert turn_of(later, "hold1") == []
    assert later[-1].kind == "result"
    assert len(site.api.requests) == 1


async def test_a_read_replays_a_finished_conversation_between_the_replay_markers(
    site: Site,
) -> None:
    async with site.worker(site.config()), site.peer() as peer:
        live = await finished_conversation(site, peer, "ls1")
        token = live[0].document["conversation_token"]
        inbox = await peer.send(
            peer.message("request.read", request="read1", conversation_token=token, replay=200)
        )
        replayed = await inbox.through_terminal()

    assert_a_whole_reply_set(replayed)
    assert replayed[0].document["accepted"] is True
    kinds = [reply.kind for reply in replayed]
    assert kinds == [
        "ack",
        "event.status",
        "event.prompt",
        "event.tool_call",
        "event.tool_result",
        "event.text",
        "event.status",
        "result",
    ]
    opening, closing = blocks(replayed, "status")
    assert opening["phase"] == "replay_start"
    assert closing["phase"] == "replay_end"
    assert closing["count"] == 4
    assert not closing.get("truncated", False)
    assert closing["usage"] == live[-1].document["usage"]
    assert [block["text"] for block in blocks(replayed, "prompt")] == ["how many streams are there"]
    assert blocks(replayed, "tool_result") == blocks(live, "tool_result")
    assert blocks(replayed, "text") == blocks(live, "text")
    # The argument vector is not journaled; the worker rebuilds it from its tool set.
    live_call, replayed_call = blocks(live, "tool_call") + blocks(replayed, "tool_call")
    assert replayed_call == live_call
    assert replayed[-1].document["stop_reason"] == "end_turn"
    assert len(site.api.requests) == 2


def bad_requests() -> list[Any]:
    guide_prompt: dict[str, Any] = json.loads(FIRST_PROMPT)
    return [
        pytest.param(b'{"protocol": "io.choria.fisk-ai.v1.request.prompt", "id": ', id="malformed"),
        pytest.param(
            json.dumps({**guide_prompt, "prompt": "x" * OVER_THE_SIZE_CAP}).encode(),
            id="oversized",
        ),
        pytest.param(
            json.dumps(
                {**guide_prompt, "protocol": "io.choria.fisk-ai.v1.request.launch"}
            ).encode(),
            id="unknown-protocol-id",
        ),
        pytest.param(
            json.dumps(
                {**guide_prompt, "protocol": "io.choria.fisk-ai.v2.request.prompt"}
            ).encode(),
            id="other-protocol-version",
        ),
        pytest.param(
            json.dumps(
                {**guide_prompt, "protocol": "io.choria.fisk-ai.v1.cancel", "reason": "stop"}
            ).encode(),
            id="not-a-request",
        ),
    ]


@pytest.mark.parametrize("payload", bad_requests())
async def test_a_bad_request_gets_the_service_error_and_the_worker_keeps_serving(
    site: Site, payload: bytes
) -> None:
    site.api.script([reply(text("there are 3 streams"))])
    async with site.worker(site.config()) as worker, site.peer() as peer:
        inbox = await peer.send(payload)
        refused = await inbox.next()
        # The same inbox next receives the following prompt's ack: nothing else answered the
        # bad one, and the worker took the next request.
        await inbox.publish(peer.task_subject, prompt(peer, "after1", "how many streams"))
        served = await inbox.through_terminal()
        still_running = worker.process.returncode is None

    assert refused.body is None
    assert refused.service_error_code == "400"
    assert refused.headers.get("Nats-Service-Error")
    assert_a_whole_reply_set(served)
    assert {reply.document["request"] for reply in served} == {"after1"}
    assert served[-1].document["text"] == "there are 3 streams"
    assert still_running, worker.errors()
    assert "Traceback" not in worker.errors()


async def test_the_guides_resume_with_a_prompt_is_refused_as_the_guide_shows(
    site: Site,
) -> None:
    payload = {
        **json.loads(FIRST_PROMPT),
        "protocol": "io.choria.fisk-ai.v1.request.resume",
        "conversation_token": GUIDE_TOKEN,
    }
    async with site.worker(site.config()), site.peer() as peer:
        refused = await (await peer.send(payload)).next()

    explained = refused.headers["Nats-Service-Error"]
    assert refused.service_error_code == "400"
    assert "request.resume.json" in explained
    assert "/prompt" in explained


async def test_the_guides_first_prompt_gets_the_documented_ack_events_and_result(
    site: Site,
) -> None:
    site.api.script(
        [
            reply(tool_use("tu_ls", "stream_ls", {}), stop_reason="tool_use"),
            reply(text("there are 3 streams")),
        ]
    )
    async with site.worker(site.config()), site.peer() as peer:
        replies = await (await peer.send(FIRST_PROMPT)).through_terminal()

    assert_a_whole_reply_set(replies)
    ack = replies[0].document
    assert {name: ack[name] for name in ("request", "conversation", "sequence")} == {
        "request": "docs1",
        "conversation": "docs1",
        "sequence": 1,
    }
    assert (ack["sender"], ack["recipient"], ack["accepted"]) == (
        {"name": IDENTITY},
        {"name": CALLER},
        True,
    )
    assert TOKEN.fullmatch(ack["conversation_token"])
    assert {reply.document["request"] for reply in replies} == {"docs1"}
    assert {reply.document["conversation"] for reply in replies} == {"docs1"}
    assert [call["name"] for call in blocks(replies, "tool_call")] == ["stream_ls"]
    assert [result["call_id"] for result in blocks(replies, "tool_result")] == ["tu_ls"]
    [answer] = [block for block in blocks(replies, "text") if block.get("final")]
    ended = replies[-1].document
    assert replies[-1].kind == "result", ended
    assert answer["text"] == ended["text"] == "there are 3 streams"
    assert ended["stop_reason"] == "end_turn"
    assert (ended["usage"]["llm_calls"], ended["usage"]["tool_calls"]) == (2, 1)


def with_token(example: bytes, token: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(example)
    assert document["conversation_token"] == GUIDE_TOKEN
    return {**document, "conversation_token": token}


async def test_the_guides_follow_up_continues_the_conversation_by_token(site: Site) -> None:
    site.api.script([reply(text("there are 3 streams")), reply(text("the first one is ORDERS"))])
    async with site.worker(site.config()), site.peer() as peer:
        first = await (await peer.send(FIRST_PROMPT)).through_terminal()
        token = first[0].document["conversation_token"]
        replies = await (await peer.send(with_token(FOLLOW_UP, token))).through_terminal()

    assert_a_whole_reply_set(replies)
    ack = replies[0].document
    assert (ack["request"], ack["conversation"], ack["accepted"]) == ("docs2", "docs1", True)
    assert ack["conversation_token"] == token
    ended = replies[-1].document
    assert replies[-1].kind == "result", ended
    assert ended["text"] == "the first one is ORDERS"
    assert ended["usage"]["llm_calls"] == 2
    sent = json.dumps(site.api.requests[-1]["messages"])
    for earlier in ("how many streams are there", "there are 3 streams"):
        assert earlier in sent
    assert "what is the first one called" in sent


async def test_the_guides_read_replays_the_conversation(site: Site) -> None:
    site.api.script([reply(text("there are 3 streams"))])
    async with site.worker(site.config()), site.peer() as peer:
        first = await (await peer.send(FIRST_PROMPT)).through_terminal()
        token = first[0].document["conversation_token"]
        replies = await (await peer.send(with_token(READ, token))).through_terminal()

    assert_a_whole_reply_set(replies)
    ack = replies[0].document
    assert (ack["request"], ack["conversation"], ack["accepted"]) == ("docs3", "docs1", True)
    assert [reply.kind for reply in replies[1:]] == [
        "event.status",
        "event.prompt",
        "event.text",
        "event.status",
        "result",
    ]
    opening, closing = blocks(replies, "status")
    assert (opening["phase"], closing["phase"], closing["count"]) == (
        "replay_start",
        "replay_end",
        2,
    )
    assert closing["usage"]["llm_calls"] == 1
    assert [block["text"] for block in blocks(replies, "prompt")] == ["how many streams are there"]
    assert [block["text"] for block in blocks(replies, "text")] == ["there are 3 streams"]
    assert len(site.api.requests) == 1


@pytest.mark.skipif(
    not UPSTREAM.is_dir(),
    reason=f"the upstream a2a schemas are not beside this checkout ({UPSTREAM})",
)
async def test_every_message_the_worker_sends_validates_against_the_upstream_schemas(
    site: Site,
) -> None:
    async with site.worker(site.config()), site.peer() as peer:
        live = await finished_conversation(site, peer, "ls1")
        token = live[0].document["conversation_token"]
        site.api.script(
            [
                reply(tool_use("tu_rm", "stream_rm", {}), stop_reason="tool_use"),
                reply(text("removed ORDERS")),
            ]
        )
        inbox = await peer.send(prompt(peer, "rm1", "remove ORDERS", conversation_token=token))
        question = (await inbox.until("elicit.request.approve"))[-1].document
        await peer.ask(
            peer.elicit_subject("rm1"),
            peer.message(
                "elicit.reply.approve",
                request="rm1",
                question_id=question["question_id"],
                choice="once",
            ),
        )
        await inbox.through_terminal()
        await (
            await peer.send(
                peer.message("request.read", request="read1", conversation_token=token, replay=9)
            )
        ).through_terminal()
        await (
            await peer.send(prompt(peer, "lost1", "hello", conversation_token="no-such-token"))
        ).through_terminal()

    sent = [reply.document for reply in peer.received]
    kinds = {str(document["protocol"]).removeprefix("io.choria.fisk-ai.v1.") for document in sent}
    assert {
        "ack",
        "event.status",
        "event.prompt",
        "event.tool_call",
        "event.tool_result",
        "event.text",
        "elicit.request.approve",
        "result",
        "error",
    } <= kinds
    assert [upstream_schema_errors(document) for document in sent] == [[]] * len(sent)
