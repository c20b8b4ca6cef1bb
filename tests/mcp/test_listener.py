"""`fisk mcp`'s listening socket: connections it accepts do not wait on Nagle's algorithm."""

from __future__ import annotations

import asyncio
import socket

from fisk_ai.mcpserver.listener import bind
from tests.patience import DEADLINE


async def test_accepted_connections_have_nagle_off() -> None:
    # With Nagle on, a response written as headers then body waits out the client's delayed ACK
    # (about 40 ms a call on Linux loopback).
    sock = bind("127.0.0.1", 0)
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def on_connection(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer: socket.socket = writer.get_extra_info("socket")
        accepted.set_result(peer.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(on_connection, sock=sock)
    try:
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        assert await asyncio.wait_for(accepted, DEADLINE) != 0
        writer.close()
    finally:
        server.close()
        await server.wait_closed()


def test_the_listening_socket_is_tcp_with_nagle_off() -> None:
    # Set on the listener itself too, so accepted connections inherit it whatever the event loop.
    with bind("127.0.0.1", 0) as sock:
        assert sock.proto == socket.IPPROTO_TCP
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
