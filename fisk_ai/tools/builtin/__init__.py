"""CORE. Built-in tools: ask_human_*, memory_*, knowledge_*, tool search deferral."""
