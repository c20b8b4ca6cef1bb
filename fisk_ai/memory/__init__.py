"""CORE. The memory store contract, limits and backends."""
