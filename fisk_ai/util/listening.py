"""A listening TCP socket for the HTTP endpoints (`fisk mcp`, the A2A 1.0 door)."""

from __future__ import annotations

import socket

from fisk_ai.errors import FiskError

__all__ = ["listening_socket"]


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
