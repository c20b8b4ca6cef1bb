"""A raw NATS peer of `fisk serve`, speaking the user guide's JSON with nats-py and nothing of ours.

The peer subscribes to an inbox of its own, then publishes a request on a worker's subject with
that inbox as the reply subject, and reads what arrives there one message at a time. Every
message a worker sends it, on an inbox or as the answer to a cancel or an elicit reply, is checked
against the upstream a2a schemas as it arrives (when they are beside this checkout), so a test
that reads a message has also proved that a Go peer would accept it.

``start_worker`` runs the installed `fisk serve` and returns once its banner is out, which is
after it subscribed; its stderr goes to a file a failing test shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import subprocess
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from fisk_ai.broker.server import EmbeddedBroker
from tests.a2a.upstream_schemas import UPSTREAM, upstream_documents, upstream_validator
from tests.e2e.agent_runs import fisk_environment
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import (
    application,
    blocks_first_run,
    command,
    echoes,
    logged,
    write_fake_app,
)
from tests.fakes.messages_api import FakeMessagesAPI
from tests.patience import DEADLINE

WAIT = DEADLINE
IDENTITY = "nats-worker"
MODEL = "claude-test-1"
SUBJECTS = "choria.fisk-ai"
PROTOCOL = "io.choria.fisk-ai.v1."
TERMINALS = frozenset({f"{PROTOCOL}result", f"{PROTOCOL}error"})
SERVICE_ERROR_CODE = "Nats-Service-Error-Code"
SERVICE_ERROR = "Nats-Service-Error"
CALLER = "peer1"
# The last line of the banner of a worker that answers prompts and serves no tools.
BANNER_END = (
    "Answering a prompt runs the agent loop and reaches every tool the top-level include and "
    "exclude selected."
)


@dataclass(frozen=True)
class Reply:
    """One message a worker published to us: its JSON, or its headers alone when it has no body
    (a service error)."""

    headers: Mapping[str, str]
    body: dict[str, Any] | None

    @property
    def document(self) -> dict[str, Any]:
        assert self.body is not None, f"a reply without a body: {dict(self.headers)}"
        return self.body

    @property
    def protocol(self) -> str:
        return str(self.document["protocol"])

    @property
    def kind(self) -> str:
        """The protocol id without the v1 namespace: ``ack``, ``event.text``, ``result``..."""
        return self.protocol.removeprefix(PROTOCOL)

    @property
    def is_terminal(self) -> bool:
        return self.body is not None and self.protocol in TERMINALS

    @property
    def service_error_code(self) -> str | None:
        return self.headers.get(SERVICE_ERROR_CODE)


def upstream_schema_errors(document: Mapping[str, Any]) -> list[str]:
    """Where ``document`` breaks the upstream schema of its protocol id; empty when it conforms
    or when the upstream schemas are not beside this checkout."""
    if not UPSTREAM.is_dir():
        return []
    validator = _validators().get(str(document.get("protocol", "")))
    if validator is None:
        name = str(document.get("protocol", "")).removeprefix(PROTOCOL)
        assert name.startswith("event."), f"no upstream schema for {document.get('protocol')}"
        validator = _validators()[f"{PROTOCOL}event"]
    return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(document)]


_VALIDATORS: dict[str, Any] = {}


def _validators() -> dict[str, Any]:
    if not _VALIDATORS:
        documents = upstream_documents()
        for document in documents:
            name = str(document["$id"]).rsplit("/", 1)[-1].removesuffix(".json")
            if name != "common":
                protocol = f"{PROTOCOL}{name}"
                _VALIDATORS[protocol] = upstream_validator(documents, protocol)
    return _VALIDATORS


def _reply_of(message: Msg) -> Reply:
    headers = dict(message.headers or {})
    if not message.data:
        return Reply(headers, None)
    body = json.loads(message.data)
    assert isinstance(body, dict), message.data
    problems = upstream_schema_errors(body)
    assert problems == [], f"{body.get('protocol')} breaks the upstream schema: {problems}"
    return Reply(headers, body)


class Inbox:
    """Our own reply subject: requests published with it as the reply, replies read in order."""

    def __init__(self, peer: WirePeer, subject: str, subscription: Subscription) -> None:
        self._peer = peer
        self.subject = subject
        self._subscription = subscription

    async def publish(self, subject: str, payload: bytes | Mapping[str, Any]) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        await self._peer.client.publish(subject, data, reply=self.subject)

    async def next(self, within: float = WAIT) -> Reply:
        message = await self._subscription.next_msg(timeout=within)
        reply = _reply_of(message)
        self._peer.received.append(reply)
        return reply

    async def through_terminal(self, within: float = WAIT) -> list[Reply]:
        """The messages up to and including the next terminal result or error."""
        replies: list[Reply] = []
        while not replies or not replies[-1].is_terminal:
            replies.append(await self.next(within))
        return replies

    async def until(self, kind: str, within: float = WAIT) -> list[Reply]:
        """The messages up to and including the next one of ``kind`` (``elicit.request.approve``,
        ``event.tool_call``...); fails on a terminal before it."""
        replies: list[Reply] = []
        while not replies or replies[-1].kind != kind:
            replies.append(await self.next(within))
            assert not replies[-1].is_terminal or kind in {"result", "error"}, [
                reply.body for reply in replies
            ]
        return replies


@dataclass
class WirePeer:
    """A caller named ``peer1`` on a raw nats-py connection, addressing the agent ``identity``."""

    client: NatsClient
    identity: str
    received: list[Reply] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def task_subject(self) -> str:
        return f"{SUBJECTS}.task.{self.identity}"

    def cancel_subject(self, request: str) -> str:
        return f"{SUBJECTS}.cancel.{self.identity}.{request}"

    def elicit_subject(self, request: str) -> str:
        return f"{SUBJECTS}.elicit.{self.identity}.{request}"

    async def inbox(self) -> Inbox:
        subject = self.client.new_inbox()
        subscription = await self.client.subscribe(subject)
        await self.client.flush()
        return Inbox(self, subject, subscription)

    async def send(self, payload: bytes | Mapping[str, Any]) -> Inbox:
        """Publish ``payload`` on the agent's task subject, its replies to a fresh inbox."""
        inbox = await self.inbox()
        await inbox.publish(self.task_subject, payload)
        return inbox

    async def ask(self, subject: str, payload: Mapping[str, Any]) -> Reply:
        """A plain request/reply, as `nats req` makes: the one answer (an ack, or an error)."""
        message = await self.client.request(subject, json.dumps(payload).encode(), timeout=WAIT)
        reply = _reply_of(message)
        self.received.append(reply)
        return reply

    def message(self, protocol: str, *, request: str, **fields: Any) -> dict[str, Any]:
        """A caller's message under ``io.choria.fisk-ai.v1.<protocol>``, header as the guide
        writes it: a fresh id, the turn's request id as the conversation tag, sequence 0."""
        return {
            "protocol": f"{PROTOCOL}{protocol}",
            "id": f"{request}-m{next(self._ids)}",
            "request": request,
            "conversation": request,
            "sequence": 0,
            "time": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "sender": {"name": CALLER},
            **fields,
        }


def sequences(replies: list[Reply]) -> list[int]:
    return [int(reply.document["sequence"]) for reply in replies]


def blocks(replies: list[Reply], kind: str) -> list[dict[str, Any]]:
    """The blocks of the events of ``kind`` (``text``, ``tool_call``...) among ``replies``."""
    return [reply.document["block"] for reply in replies if reply.kind == f"event.{kind}"]


def assert_a_whole_reply_set(replies: list[Reply]) -> None:
    """An ack at sequence 1, then gap-free sequences to one terminal message, which is last."""
    assert replies[0].kind == "ack", replies[0].body
    assert sequences(replies) == list(range(1, len(replies) + 1))
    assert [reply.is_terminal for reply in replies] == [False] * (len(replies) - 1) + [True]


@dataclass
class Worker:
    process: asyncio.subprocess.Process
    stderr: Path

    def errors(self) -> str:
        return self.stderr.read_text(errors="replace")


@contextlib.asynccontextmanager
async def start_worker(
    config: Path, environment: Mapping[str, str], stderr: Path
) -> AsyncIterator[Worker]:
    """`fisk serve --config CONFIG`, yielded once its banner (which ends with the prompts note)
    is out; killed on the way out if still running."""
    with stderr.open("wb") as errors:
        process = await asyncio.create_subprocess_exec(
            str(FISK),
            "serve",
            "--config",
            str(config),
            cwd=config.parent,
            env=dict(environment),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
    worker = Worker(process, stderr)
    try:
        assert process.stdout is not None
        async with asyncio.timeout(WAIT):
            while True:
                line = await process.stdout.readline()
                assert line, f"fisk serve ended before its banner:\n{worker.errors()}"
                if line.decode().strip() == BANNER_END:
                    break
        yield worker
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@dataclass(frozen=True)
class Site:
    """A broker, the fake Messages API and a fake `nats` application with three commands:
    ``stream_ls`` (read only), ``stream_rm`` (behind ai:confirm) and ``stream_hold``, whose first
    run blocks until released. Every run of the last two is logged to ``runs_log``."""

    home: Path
    broker: EmbeddedBroker
    api: FakeMessagesAPI
    application: Path
    hold_pid: Path
    runs_log: Path
    environment: dict[str, str]

    def config(self, *, request_timeout: str = "30s", extra: str = "") -> Path:
        """A prompts worker named nats-worker with elicitation on, two prompts at a time."""
        path = self.home / f"prompts-{request_timeout}.yaml"
        path.write_text(
            f"identity: {IDENTITY}\n"
            f"application_path: {self.application}\n"
            "nats_context: test\n"
            "system_prompt: You operate NATS. Answer with what you did and what you found.\n"
            "llm:\n"
            f"  model: {MODEL}\n"
            "expose:\n"
            "  agent:\n"
            "    a2a:\n"
            f"      request_timeout: {request_timeout}\n"
            "      prompts:\n"
            "        workers: 2\n"
            "        elicit: true\n" + extra
        )
        return path

    def worker(
        self, config: Path, name: str = "worker"
    ) -> contextlib.AbstractAsyncContextManager[Worker]:
        return start_worker(config, self.environment, self.home / f"{name}.stderr")

    @contextlib.asynccontextmanager
    async def peer(self) -> AsyncIterator[WirePeer]:
        client = await self.broker.connect(name=CALLER)
        try:
            yield WirePeer(client, IDENTITY)
        finally:
            await client.close()


@contextlib.asynccontextmanager
async def wire_site(home: Path, *, jetstream: bool = False) -> AsyncIterator[Site]:
    """A Site under ``home``; the broker reached through the NATS context ``test``."""
    hold_pid = home / "hold.pid"
    runs_log = home / "runs.jsonl"
    model = application(
        "nats",
        commands=[
            command("stream_ls", "List the streams", tags=["ai:read_only"]),
            command(
                "stream_rm",
                "Remove a stream",
                tags=["ai:confirm"],
                action=logged(echoes(), runs_log),
            ),
            command(
                "stream_hold",
                "Hold the streams still",
                action=logged(blocks_first_run(hold_pid, home / "hold.marker"), runs_log),
            ),
        ],
    )
    app = write_fake_app(home, model, name="nats")
    async with EmbeddedBroker(jetstream=jetstream) as broker:
        contexts = home / "xdg-config" / "nats" / "context"
        contexts.mkdir(parents=True)
        (contexts / "test.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
        with FakeMessagesAPI() as api:
            environment = fisk_environment(home, api, {"XDG_CONFIG_HOME": str(home / "xdg-config")})
            yield Site(home, broker, api, app, hold_pid, runs_log, environment)
