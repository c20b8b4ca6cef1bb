"""How an mcp_clients entry is reached is a closed vocabulary: an ``McpTransport`` member,
decided by the entry's shape (``command`` or ``url``), never a free string. (The other closed
vocabulary of architecture row 18, the knowledge degrade reason, is held by
tests/knowledge/test_degraded_search.py::test_a_degraded_search_names_the_failed_step_and_no_error_text.)
"""

from __future__ import annotations

import socket

from fisk_ai.lineui.info import mcp_server_lines
from fisk_ai.tools.mcp.sessions import McpTransport, discover_mcp_servers
from tests.mcp.conftest import http_entry, stdio_entry


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_entry_is_reached_over_one_of_the_two_transports_the_guide_names() -> None:
    assert {transport.value for transport in McpTransport} == {"stdio", "streamable HTTP"}


async def test_fisk_info_names_each_entry_s_transport_from_the_closed_set() -> None:
    url = f"http://127.0.0.1:{unused_port()}/mcp"

    reports = await discover_mcp_servers([stdio_entry(), http_entry(url)])

    assert [report.transport for report in reports] == [
        McpTransport.STDIO,
        McpTransport.STREAMABLE_HTTP,
    ]
    lines = mcp_server_lines(reports)
    assert lines[0].startswith("echo: stdio ")
    assert f"web: streamable HTTP {url}" in lines
