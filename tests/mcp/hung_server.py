"""A stdio MCP server that hangs in the handshake: it answers the 2026-07-28 probe as a server
built on the Python SDK 1.x does, then on ``initialize`` records its pid in the file named by
its first argument and blocks, reading nothing more, so closing its stdin does not end it.

A SIGTERM is recorded beside that file (``<file>.term``) before the server leaves, so a test
can tell a child that was asked to leave from one that was killed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType


def main() -> None:
    record = Path(sys.argv[1])

    def terminated(number: int, frame: FrameType | None) -> None:
        record.with_name(record.name + ".term").write_text("SIGTERM\n")
        sys.exit(0)

    signal.signal(signal.SIGTERM, terminated)
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "server/discover":
            error = {"code": -32602, "message": "Invalid request parameters", "data": ""}
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
        elif method == "initialize":
            record.write_text(f"{os.getpid()}\n")
            # Never answers, and never reads again: only a signal ends it.
            while True:
                signal.pause()


if __name__ == "__main__":
    main()
