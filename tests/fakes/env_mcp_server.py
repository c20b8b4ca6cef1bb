"""A stdio MCP server that reports the environment it was started with: at startup it writes
the names of its variables (one JSON list) to the file named by its first argument, and its
``environment_names`` tool answers the same list, so a test can read what a child was given
whether the child was only listed (``fisk info``) or called (a run)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mcp.server import MCPServer

server = MCPServer("env")
NAMES = sorted(os.environ)


@server.tool(description="List the names of the variables in this server's environment.")
def environment_names() -> str:
    return json.dumps(NAMES)


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(NAMES))
    server.run()
