"""CORE. The knowledge store: SQLite, chunking, indexing and search.

Importing this package is cheap: the SQLite binding (sqlean) is loaded only by the modules that
open the database, so `fisk --help` and `fisk info` never pay for it.
"""

from fisk_ai.knowledge.errors import (
    FormatMismatch,
    KnowledgeError,
    KnowledgeLocked,
    QueryError,
)

__all__ = [
    "DATABASE_NAME",
    "FORMAT_VERSION",
    "LOCK_NAME",
    "FormatMismatch",
    "KnowledgeError",
    "KnowledgeLocked",
    "QueryError",
]

DATABASE_NAME = "knowledge.db"
LOCK_NAME = "knowledge.lock"
# Pinned in the metadata table; a database of any other version is refused both ways.
FORMAT_VERSION = 2
