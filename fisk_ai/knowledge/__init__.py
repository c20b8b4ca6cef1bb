"""CORE. The knowledge store: SQLite, chunking, indexing and search."""
