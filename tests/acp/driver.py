"""Driving the installed `fisk acp` with the ACP package's own client side.

The agent runs as a subprocess against the fake Messages API and a fake fisk application, as
the e2e tests run `fisk run`. Its stdout is read here line by line and handed on to the SDK's
client connection, so a test sees every raw line the agent wrote as well as what the SDK made
of it.

Tests that neither end the agent nor need a second one share one `fisk acp` (``SharedAgent``):
each borrows it (``BorrowedAgent``) with a client of its own, its own scripted model turns and
its own ACP sessions, and sees only the journals and command runs made while it held it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)

from fisk_ai.sessions import FileSessionStore, fold
from tests.e2e.agent_runs import fisk_environment, write_config
from tests.e2e.conftest import FISK
from tests.fakes.fiskapp import application, arg, command, echoes, logged, runs_of, write_fake_app
from tests.fakes.messages_api import FakeMessagesAPI, ScriptWindow
from tests.patience import DEADLINE

if TYPE_CHECKING:
    from acp.interfaces import Client

FRAME_LIMIT = 50 * 1024 * 1024
HARNESS = "harness:\n  human_in_the_loop: {enabled: true}\n  confirm_tags: [impact:rw]\n"

Choose = Callable[[ToolCallUpdate, list[PermissionOption]], str | None]
"""Picks the option id to answer a permission request with; None cancels it."""


@dataclass
class Fleet:
    """A fake application in ``home``: ``show`` is read-only, ``purge`` is gated and logs its
    runs to ``purge_log``."""

    home: Path
    config: Path
    purge_log: Path

    @property
    def state(self) -> Path:
        return self.home / "sessions"

    async def journals(self) -> list[str]:
        return [summary.run_id for summary in await FileSessionStore(self.state).list()]


def fleet(home: Path) -> Fleet:
    purge_log = home / "purge-runs.jsonl"
    app = write_fake_app(
        home,
        application(
            "fleet",
            commands=[
                command(
                    "show",
                    "Show a part of the fleet",
                    tags=["ai:read_only"],
                    args=[arg("what", "What to show")],
                ),
                command(
                    "purge",
                    "Purge the cache",
                    tags=["impact:rw", "ai:destructive"],
                    action=logged(echoes(), purge_log),
                ),
            ],
        ),
        name="fleet",
    )
    return Fleet(home, write_config(home, application=app, extra=HARNESS), purge_log)


async def journal_completed(fleet_: Fleet, session_id: str) -> bool:
    return fold(await FileSessionStore(fleet_.state).read(session_id)).completed


@dataclass
class RecordingClient:
    """An ACP client that keeps every update and permission request, answering each request
    as ``choose`` says (allow once when not told otherwise)."""

    choose: Choose = lambda _call, _options: "allow-once"
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permission_requests: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(
        default_factory=list
    )
    asked: asyncio.Event = field(default_factory=asyncio.Event)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append((tool_call, options))
        self.asked.set()
        chosen = self.choose(tool_call, options)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None

    def agent_text(self) -> str:
        return "".join(
            update.content.text
            for _, update in self.updates
            if isinstance(update, AgentMessageChunk)
            and isinstance(update.content, TextContentBlock)
        )

    def thought_text(self) -> str:
        return "".join(
            update.content.text
            for _, update in self.updates
            if isinstance(update, AgentThoughtChunk)
            and isinstance(update.content, TextContentBlock)
        )

    def user_text(self) -> str:
        return "".join(
            update.content.text
            for _, update in self.updates
            if isinstance(update, UserMessageChunk) and isinstance(update.content, TextContentBlock)
        )

    def tool_calls(self) -> list[ToolCallStart]:
        return [update for _, update in self.updates if isinstance(update, ToolCallStart)]

    def tool_updates(self) -> list[ToolCallProgress]:
        return [update for _, update in self.updates if isinstance(update, ToolCallProgress)]


@dataclass
class RelayClient:
    """The client side of a `fisk acp` that tests share in turn: it hands every update and
    permission request to the client of the test holding the agent now."""

    current: RecordingClient = field(default_factory=RecordingClient)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        return await self.current.request_permission(session_id, tool_call, options)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        await self.current.session_update(session_id, update)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self.current.ext_method(method, params)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        await self.current.ext_notification(method, params)

    def on_connect(self, conn: Any) -> None:
        return None


@dataclass
class AcpAgent:
    """A running `fisk acp`: the SDK connection to it, its process and every line it wrote."""

    connection: ClientSideConnection
    process: asyncio.subprocess.Process
    stdout_lines: list[bytes]
    stderr: bytearray

    async def initialize(self) -> Any:
        return await self.connection.initialize(protocol_version=PROTOCOL_VERSION)

    async def new_session(self) -> str:
        await self.initialize()
        response = await self.connection.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        return str(response.session_id)

    async def prompt(self, session_id: str, text: str) -> Any:
        return await self.connection.prompt(
            session_id=session_id, prompt=[TextContentBlock(type="text", text=text)]
        )

    def crash_client(self) -> None:
        """What the agent sees of a client that died: its input ends."""
        assert self.process.stdin is not None
        self.process.stdin.close()

    async def exited(self) -> int:
        return await asyncio.wait_for(self.process.wait(), DEADLINE)

    def frames(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout_lines]


@contextlib.asynccontextmanager
async def fisk_acp(
    fleet_: Fleet, api: FakeMessagesAPI, client: RecordingClient | RelayClient
) -> AsyncIterator[AcpAgent]:
    """`fisk acp` serving ``fleet_``'s agent, its model ``api``, driven by ``client``."""
    process = await asyncio.create_subprocess_exec(
        str(FISK),
        "acp",
        "--state-dir",
        str(fleet_.state),
        "--config",
        str(fleet_.config),
        cwd=fleet_.home,
        env=fisk_environment(fleet_.home, api),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=FRAME_LIMIT,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    lines: list[bytes] = []
    stderr = bytearray()
    frames = asyncio.StreamReader(limit=FRAME_LIMIT)

    async def tee(source: asyncio.StreamReader) -> None:
        while line := await source.readline():
            lines.append(line)
            frames.feed_data(line)
        frames.feed_eof()

    async def collect(source: asyncio.StreamReader) -> None:
        while chunk := await source.read(65536):
            stderr.extend(chunk)

    readers = [
        asyncio.create_task(tee(process.stdout)),
        asyncio.create_task(collect(process.stderr)),
    ]
    # The SDK's Client protocol lists every client method; the router refuses the others.
    connection = connect_to_agent(cast("Client", client), process.stdin, frames)
    try:
        yield AcpAgent(connection, process, lines, stderr)
    finally:
        if not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), DEADLINE)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            await asyncio.gather(*readers, return_exceptions=True)
            # After a crash of the client the connection's writer has already lost its pipe.
            with contextlib.suppress(ConnectionError):
                await connection.close()


@dataclass
class SharedAgent:
    """One `fisk acp` serving ``fleet_``'s agent for the tests of a module, its model ``api``."""

    fleet: Fleet
    api: FakeMessagesAPI
    relay: RelayClient
    agent: AcpAgent

    async def borrow(self) -> BorrowedAgent:
        assert self.agent.process.returncode is None, "the shared agent has exited"
        client = RecordingClient()
        self.relay.current = client
        return BorrowedAgent(
            self.agent,
            self.fleet,
            self.api.window(),
            client,
            purges_before=len(runs_of(self.fleet.purge_log)),
            journals_before=frozenset(await self.fleet.journals()),
        )


@contextlib.asynccontextmanager
async def shared_agent(home: Path, api: FakeMessagesAPI) -> AsyncIterator[SharedAgent]:
    relay = RelayClient()
    home_fleet = fleet(home)
    async with fisk_acp(home_fleet, api, relay) as agent:
        yield SharedAgent(home_fleet, api, relay, agent)


@dataclass
class BorrowedAgent:
    """A test's hold of a shared `fisk acp`: its client, its model turns (``model``), and the
    purge runs and journals made since it took hold."""

    agent: AcpAgent
    fleet: Fleet
    model: ScriptWindow
    client: RecordingClient
    purges_before: int
    journals_before: frozenset[str]

    def choosing(self, choose: Choose) -> RecordingClient:
        """This test's client, answering permission requests as ``choose`` says."""
        self.client.choose = choose
        return self.client

    def purges(self) -> list[list[str]]:
        return runs_of(self.fleet.purge_log)[self.purges_before :]

    async def new_journals(self) -> list[str]:
        return [run for run in await self.fleet.journals() if run not in self.journals_before]
