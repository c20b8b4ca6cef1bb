"""A small MCP server written with the SDK's MCPServer, for the client tests.

Run as a script it serves stdio, or streamable HTTP with ``--http PORT``. ``ECHO_SECRET`` in its
environment is echoed by the ``whoami`` tool, so a test can see what the child was given.
"""

from __future__ import annotations

import os
import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("echo", instructions="echoes")


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return text


@server.tool(description="Add two numbers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Report the variable ECHO_SECRET and whether ANTHROPIC_API_KEY is set.")
def whoami() -> str:
    leaked = "yes" if "ANTHROPIC_API_KEY" in os.environ else "no"
    return f"secret={os.environ.get('ECHO_SECRET', '')} anthropic={leaked}"


@server.tool(description="Report the server's process id.")
def pid() -> int:
    return os.getpid()


@server.tool(description="Exit the server process at once.")
def die() -> str:
    os._exit(3)


@server.tool(description="Sleep for a number of seconds.")
async def nap(seconds: float) -> str:
    import anyio

    await anyio.sleep(seconds)
    return "rested"


@server.tool(description="Add a tool called late and tell the client the list changed.")
async def grow(ctx: Context) -> str:
    server.add_tool(lambda: "late", name="late", description="Arrived after a list change.")
    await ctx.notify_tools_changed()
    from contextlib import suppress

    with suppress(Exception):
        await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    if os.environ.get("ECHO_STDERR"):
        sys.stderr.write(os.environ["ECHO_STDERR"] + "\n")
        sys.stderr.flush()
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
