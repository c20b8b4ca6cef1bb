"""What a fake MCP server lists and returns: a good tool, and a PNG image."""

from __future__ import annotations

import base64

GOOD = {"name": "good", "description": "A good tool.", "inputSchema": {"type": "object"}}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 300).decode()
