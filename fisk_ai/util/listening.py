"""What the HTTP endpoints (`fisk mcp`, the A2A 1.0 door) listen with: a TCP socket, and a
uvicorn server that leaves the signals to its host. uvicorn is imported only when one starts."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from typing import Any

from fisk_ai.errors import FiskError

__all__ = ["QuietServer", "listening_socket"]


def listening_socket(
    address: str, port: int, *, address_setting: str, port_setting: str
) -> socket.socket:
    """A non-blocking socket listening on ``address``:``port``, or an error naming the setting
    to change (``address_setting`` or ``port_setting``, as the operator writes them)."""
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise FiskError(
            f"cannot listen on address {address}: {exc.strerror}; change {address_setting}"
        ) from None
    family, kind, _, _, where = infos[0]
    # Named as TCP, not left 0: asyncio turns Nagle off on an accepted connection only when the
    # listening socket says IPPROTO_TCP, and the option set here is inherited by every accepted
    # connection besides. With Nagle on, uvicorn's separate header and body writes wait out the
    # client's delayed ACK, some 40 ms a call, and streamed pieces wait with them.
    sock = socket.socket(family, kind, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind(where)
    except OSError as exc:
        sock.close()
        raise FiskError(
            f"cannot listen on {address} port {port}: {exc.strerror or exc}; change {port_setting}"
        ) from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


class QuietServer:
    """uvicorn's server with its own signal handling left out, since its host drains on the
    first interrupt and stops on the second, and with ``ready`` set once it listens."""

    def __init__(self, config: Any) -> None:
        import uvicorn

        self.ready = asyncio.Event()
        ready = self.ready

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets=sockets)
                ready.set()

        self._server = Server(config)

    @property
    def should_exit(self) -> bool:
        return bool(self._server.should_exit)

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self._server.should_exit = value

    @property
    def force_exit(self) -> bool:
        return bool(self._server.force_exit)

    @force_exit.setter
    def force_exit(self, value: bool) -> None:
        self._server.force_exit = value

    async def serve(self, sockets: list[socket.socket]) -> None:
        await self._server.serve(sockets=sockets)

    async def listening(self, serving: asyncio.Task[None]) -> bool:
        """Wait until the server listens or ``serving``, the task running ``serve``, ends;
        return whether it listens."""
        ready = asyncio.create_task(self.ready.wait())
        await asyncio.wait({serving, ready}, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        return not serving.done()
