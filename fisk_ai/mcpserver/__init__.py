"""HOST. fisk mcp: serving the selected tools over MCP."""
