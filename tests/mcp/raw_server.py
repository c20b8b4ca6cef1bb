"""A stdio MCP server written by hand, for what the SDK's own servers will not send: descriptors
the SDK would refuse, and results of any content. It speaks the handshake era only, and answers
the 2026-07-28 probe (``server/discover``) as a server built on the Python SDK 1.x does: the
same JSON-RPC error, after the same burst of validation errors on stderr.

``RAW_TOOLS`` holds the tools/list answer's tools (JSON); ``RAW_CONTENT`` the content every
tools/call answers with (JSON); ``RAW_BIG_TEXT`` a size in bytes, which makes every call
answer one text block that long instead.
"""

from __future__ import annotations

import json
import os
import sys

PROBE_BURST = """Failed to validate request: 31 validation errors for ClientRequest
PingRequest.method
  Input should be 'ping' [type=literal_error, input_value='server/discover', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error
InitializeRequest.method
  Input should be 'initialize' [type=literal_error, input_value='server/discover', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error
InitializeRequest.params.protocolVersion
  Field required [type=missing, input_value={'_meta': {}}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
ListToolsRequest.method
  Input should be 'tools/list' [type=literal_error, input_value='server/discover', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error
"""


def answer(request_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


def refuse(request_id: object, code: int, message: str) -> None:
    error = {"code": code, "message": message, "data": ""}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}) + "\n")
    sys.stdout.flush()


def content() -> list[object]:
    size = int(os.environ.get("RAW_BIG_TEXT", "0"))
    if size:
        return [{"type": "text", "text": "x" * size}]
    return list(json.loads(os.environ.get("RAW_CONTENT", "[]")))


def main() -> None:
    tools = json.loads(os.environ.get("RAW_TOOLS", "[]"))
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        request_id = message.get("id")
        if request_id is None:
            continue
        if method == "server/discover":
            sys.stderr.write(PROBE_BURST)
            sys.stderr.flush()
            refuse(request_id, -32602, "Invalid request parameters")
        elif method == "initialize":
            answer(
                request_id,
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": "raw", "version": "1.0.0"},
                },
            )
        elif method == "tools/list":
            answer(request_id, {"tools": tools})
        elif method == "tools/call":
            answer(request_id, {"content": content(), "isError": False})
        elif method == "ping":
            answer(request_id, {})
        else:
            refuse(request_id, -32601, "Method not found")


if __name__ == "__main__":
    main()
