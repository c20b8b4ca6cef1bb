"""`fisk run` and `fisk session --config` with sessions on a JetStream stream.

The stream lives on the embedded broker; the `fisk` subprocess reaches it through a NATS context
file in a private XDG_CONFIG_HOME, as an operator's `nats context add` would leave it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.sessions import JetStreamSessionStore, Terminal, TerminalReason
from tests.e2e.agent_runs import fisk, fisk_environment, session_id_of, write_config
from tests.e2e.session_stream import STREAM, add_session_stream
from tests.fakes.messages_api import FakeMessagesAPI, reply, text
from tests.sessions.builders import meta, result, turn

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)

SESSIONS_CONFIG = (
    "nats_context: e2e\n"
    "harness:\n"
    "  sessions:\n"
    "    backend: jetstream\n"
    "    options:\n"
    f"      stream: {STREAM}\n"
)


@dataclass(frozen=True)
class Site:
    """A home directory whose agent.yaml keeps sessions on the broker's stream."""

    home: Path
    config: Path
    broker: EmbeddedBroker

    def environment(self, api: FakeMessagesAPI | None = None) -> dict[str, str]:
        return fisk_environment(self.home, api, {"XDG_CONFIG_HOME": str(self.home / "xdg-config")})

    async def fisk(
        self, *args: str, api: FakeMessagesAPI | None = None
    ) -> subprocess.CompletedProcess[str]:
        # In a thread, so the broker's log keeps draining while the command runs.
        return await asyncio.to_thread(fisk, *args, cwd=self.home, env=self.environment(api))


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with EmbeddedBroker(jetstream=True) as broker:
        contexts = tmp_path / "xdg-config" / "nats" / "context"
        contexts.mkdir(parents=True)
        (contexts / "e2e.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
        config = write_config(tmp_path, extra=SESSIONS_CONFIG)
        yield Site(tmp_path, config, broker)


async def write_suspended_session(broker: EmbeddedBroker, run_id: str) -> None:
    client = await broker.connect(name="another worker")
    try:
        store = JetStreamSessionStore(STREAM, connection=client)
        async with await store.create(run_id, meta(run_id, "check the ORDERS stream")) as journal:
            await journal.append(turn(1, "tu_1", text="Looking at ORDERS."))
            await journal.append(result("tu_1", "ORDERS: 3 consumers"))
            await journal.append(Terminal(TerminalReason.SUSPENDED))
    finally:
        await client.close()


async def test_a_run_is_listed_shown_and_removed_from_the_stream(site: Site) -> None:
    await add_session_stream(site.broker)
    with FakeMessagesAPI([reply(text("All green."))]) as api:
        ran = await site.fisk("run", "--no-tui", "--config", str(site.config), "fleet ok?", api=api)
    assert ran.returncode == 0, ran.stderr
    session = session_id_of(ran.stderr)

    listed = await site.fisk("session", "--config", str(site.config), "ls")
    assert (listed.returncode, listed.stderr) == (0, "")
    [row] = listed.stdout.splitlines()[1:]
    assert row.split()[0] == session and "completed" in row and "fleet ok?" in row

    shown = await site.fisk(
        "session", "--config", str(site.config), "show", session, "--transcript"
    )
    assert (shown.returncode, shown.stderr) == (0, "")
    assert "Status: completed" in shown.stdout
    assert shown.stdout.split("--- transcript ---\n", 1)[1].splitlines() == [
        "> fleet ok?",
        "All green.",
    ]

    removed = await site.fisk("session", "--config", str(site.config), "rm", session)
    assert removed.stdout == f"Removed session {session}\n"
    assert (await site.fisk("session", "--config", str(site.config), "ls")).stdout == (
        "No sessions\n"
    )


async def test_a_session_another_worker_wrote_is_shown(site: Site) -> None:
    await add_session_stream(site.broker)
    await write_suspended_session(site.broker, "nightly-1")

    shown = await site.fisk("session", "--config", str(site.config), "show", "nightly-1")

    assert shown.returncode == 0, shown.stderr
    assert "Status: suspended" in shown.stdout
    assert "Tool calls: 1 (remote 0)" in shown.stdout


async def test_a_missing_stream_fails_the_command_with_the_fix(site: Site) -> None:
    listed = await site.fisk("session", "--config", str(site.config), "ls")

    assert listed.returncode == 1 and listed.stdout == ""
    [line] = listed.stderr.splitlines()
    assert line.startswith(f"fisk: error: stream {STREAM} does not exist")
    assert line.endswith(
        f"nats --context e2e stream add {STREAM} --subjects 'fisk.sessions.>' "
        "--max-msgs-per-subject=1 --discard=new --discard-per-subject"
    )


async def test_state_dir_is_refused_with_the_jetstream_backend(site: Site) -> None:
    listed = await site.fisk(
        "session", "--config", str(site.config), "--state-dir", str(site.home), "ls"
    )

    assert listed.returncode == 1
    [line] = listed.stderr.splitlines()
    assert "--state-dir applies only to the file session backend" in line
