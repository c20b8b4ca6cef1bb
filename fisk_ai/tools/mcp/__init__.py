"""Tools imported from third-party MCP servers (``mcp_clients``).

``importing`` is pure: naming, filtering, validating descriptors, redaction and the tool value the
loop calls. ``sessions`` holds the connections and is the only module here that imports the
``mcp`` SDK, and only when a session is opened, so nothing pays for it until an entry exists.
"""
